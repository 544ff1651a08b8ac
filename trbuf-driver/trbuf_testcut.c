// SPDX-License-Identifier: GPL-2.0
/*
 * Test knob test_cut_us: a pinned hrtimer on every CPU that, every that
 * many microseconds, cuts the traced task it interrupts in user mode: its
 * CPU's sub-buffer is closed under it (as FLUSH does), so its cursor
 * moves and a sequence it was inside must be rolled back, and a
 * reschedule is forced (a cut by another task's writes at switch-in).
 * Under QEMU -singlestep the interrupt lands between any two
 * instructions, so the rollback kselftests cut sequences by construction
 * instead of by the chance of a timer tick.  Off (0) by default; never
 * needed outside the tests.
 */
#include <linux/hrtimer.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <asm/irq_regs.h>
#include <asm/ptrace.h>
#include <linux/smp.h>
#include "trbuf_core.h"

static unsigned int test_cut_us;
static DEFINE_PER_CPU(struct hrtimer, trbuf_testcut_timer);
static DEFINE_MUTEX(trbuf_testcut_lock);
static bool trbuf_testcut_ready;	/* timers initialised (module init ran) */

static enum hrtimer_restart testcut_fn(struct hrtimer *t)
{
	unsigned int us = READ_ONCE(test_cut_us);

	if (!us)
		return HRTIMER_NORESTART;
	if (current->trbuf) {
		struct pt_regs *regs = get_irq_regs();

		if (regs && user_mode(regs))
			trbuf_flush_this_cpu(current->trbuf->buf);
		set_tsk_need_resched(current);
		set_preempt_need_resched();
	}
	hrtimer_forward_now(t, ns_to_ktime((u64)us * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

static void testcut_start(void *info)
{
	hrtimer_start(this_cpu_ptr(&trbuf_testcut_timer),
		      ns_to_ktime((u64)READ_ONCE(test_cut_us) * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_PINNED);
}

static void testcut_stop_all(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		hrtimer_cancel(per_cpu_ptr(&trbuf_testcut_timer, cpu));
}

static int testcut_set(const char *val, const struct kernel_param *kp)
{
	unsigned int us;
	int ret;

	ret = kstrtouint(val, 0, &us);
	if (ret)
		return ret;
	/* below 10 us the timer would leave the CPU no time for anything */
	if (us && (us < 10 || us > USEC_PER_SEC))
		return -EINVAL;
	mutex_lock(&trbuf_testcut_lock);
	if (trbuf_testcut_ready)
		testcut_stop_all();
	WRITE_ONCE(test_cut_us, us);
	if (us && trbuf_testcut_ready)
		on_each_cpu(testcut_start, NULL, 1);
	mutex_unlock(&trbuf_testcut_lock);
	return 0;
}

static const struct kernel_param_ops testcut_ops = {
	.set = testcut_set,
	.get = param_get_uint,
};
module_param_cb(test_cut_us, &testcut_ops, &test_cut_us, 0644);
MODULE_PARM_DESC(test_cut_us, "test: cut the traced task in user mode every N us (10..1000000, 0 off)");

/**
 * trbuf_testcut_init - prepare the per-CPU timers of test_cut_us
 *
 * Starts them if the parameter was given at load time.
 */
void trbuf_testcut_init(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct hrtimer *t = per_cpu_ptr(&trbuf_testcut_timer, cpu);

		hrtimer_init(t, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED);
		t->function = testcut_fn;
	}
	mutex_lock(&trbuf_testcut_lock);
	trbuf_testcut_ready = true;
	if (READ_ONCE(test_cut_us))
		on_each_cpu(testcut_start, NULL, 1);
	mutex_unlock(&trbuf_testcut_lock);
}

/**
 * trbuf_testcut_exit - stop the timers of test_cut_us for good
 */
void trbuf_testcut_exit(void)
{
	mutex_lock(&trbuf_testcut_lock);
	WRITE_ONCE(test_cut_us, 0);
	testcut_stop_all();
	trbuf_testcut_ready = false;
	mutex_unlock(&trbuf_testcut_lock);
}
