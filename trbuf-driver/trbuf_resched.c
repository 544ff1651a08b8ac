// SPDX-License-Identifier: GPL-2.0
/*
 * Test knob test_resched_us: a pinned hrtimer on every CPU that forces a
 * reschedule of the traced task it interrupts every that many
 * microseconds, so the rollback kselftests cut sequences by construction
 * (under QEMU -singlestep an interrupt lands between any two
 * instructions) instead of by the chance of a timer tick.  Off (0) by
 * default; never needed outside the tests.
 */
#include <linux/hrtimer.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include "trbuf_core.h"

static unsigned int test_resched_us;
static DEFINE_PER_CPU(struct hrtimer, trbuf_resched_timer);
static DEFINE_MUTEX(trbuf_resched_lock);
static bool trbuf_resched_ready;	/* timers initialised (module init ran) */

static enum hrtimer_restart resched_fn(struct hrtimer *t)
{
	unsigned int us = READ_ONCE(test_resched_us);

	if (!us)
		return HRTIMER_NORESTART;
	if (current->trbuf) {
		set_tsk_need_resched(current);
		set_preempt_need_resched();
	}
	hrtimer_forward_now(t, ns_to_ktime((u64)us * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

static void resched_start(void *info)
{
	hrtimer_start(this_cpu_ptr(&trbuf_resched_timer),
		      ns_to_ktime((u64)READ_ONCE(test_resched_us) * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_PINNED);
}

static void resched_stop_all(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		hrtimer_cancel(per_cpu_ptr(&trbuf_resched_timer, cpu));
}

static int resched_set(const char *val, const struct kernel_param *kp)
{
	unsigned int us;
	int ret;

	ret = kstrtouint(val, 0, &us);
	if (ret)
		return ret;
	/* below 10 us the timer would leave the CPU no time for anything */
	if (us && (us < 10 || us > USEC_PER_SEC))
		return -EINVAL;
	mutex_lock(&trbuf_resched_lock);
	if (trbuf_resched_ready)
		resched_stop_all();
	WRITE_ONCE(test_resched_us, us);
	if (us && trbuf_resched_ready)
		on_each_cpu(resched_start, NULL, 1);
	mutex_unlock(&trbuf_resched_lock);
	return 0;
}

static const struct kernel_param_ops resched_ops = {
	.set = resched_set,
	.get = param_get_uint,
};
module_param_cb(test_resched_us, &resched_ops, &test_resched_us, 0644);
MODULE_PARM_DESC(test_resched_us, "test: force a reschedule of traced tasks every N us (10..1000000, 0 off)");

/**
 * trbuf_resched_init - prepare the per-CPU timers of test_resched_us
 *
 * Starts them if the parameter was given at load time.
 */
void trbuf_resched_init(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct hrtimer *t = per_cpu_ptr(&trbuf_resched_timer, cpu);

		hrtimer_init(t, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED);
		t->function = resched_fn;
	}
	mutex_lock(&trbuf_resched_lock);
	trbuf_resched_ready = true;
	if (READ_ONCE(test_resched_us))
		on_each_cpu(resched_start, NULL, 1);
	mutex_unlock(&trbuf_resched_lock);
}

/**
 * trbuf_resched_exit - stop the timers of test_resched_us for good
 */
void trbuf_resched_exit(void)
{
	mutex_lock(&trbuf_resched_lock);
	WRITE_ONCE(test_resched_us, 0);
	resched_stop_all();
	trbuf_resched_ready = false;
	mutex_unlock(&trbuf_resched_lock);
}
