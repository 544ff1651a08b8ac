// SPDX-License-Identifier: MIT
/*
 * bdump_vm_prod.c - self-checking producer for tests/host/bdump-vm.sh:
 * registers with /dev/trbuf and writes, from each of NTHREADS threads, N
 * 8-byte records (tag << 32 | counter) with the hand-written restartable
 * sequence of tests/kselftest/trbuf_prod.S.  tag = BDVM_TAG | (tid &
 * 0xffffff), so the checker (bdump_vm_check.c) can prove each record was
 * attributed by the schedule markers to the task that wrote it.  Threads
 * hop between the CPUs and yield every chunk to force context switches.
 *
 * Traced code must not call libc (libc may use r15): raw system calls only.
 *
 * usage: bdump_vm_prod NTHREADS N [stay]
 *   stay: no hopping, every thread stays where it runs (and exits there)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/futex.h>
#include <linux/trbuf.h>
#include "sys.h"
#include "trbuf_prod.h"

#define BDVM_TAG	0xae000000u
#define MAX_THREADS	8
#define CHUNK		2048


static char thread_stacks[MAX_THREADS][64 << 10];
static int tid_words[MAX_THREADS];
static unsigned long nrec;
static int stay;

/* Traced: this thread's records, hopping CPUs and yielding every chunk. */
static void prod_run(long idx)
{
	uint64_t tid = ae_sys0(__NR_gettid);
	uint64_t base = (uint64_t)(BDVM_TAG | (tid & 0xffffff)) << 32;
	unsigned long done = 0, k, mask;
	int cpu = idx;

	while (done < nrec) {
		k = nrec - done < CHUNK ? nrec - done : CHUNK;
		trbuf_prod_loop(base + done, k);
		done += k;
		if (stay)
			continue;
		cpu = (cpu + 1) % 2;
		mask = 1UL << cpu;
		ae_sys3(__NR_sched_setaffinity, 0, sizeof(mask), &mask);
		ae_sys0(__NR_sched_yield);
	}
}

int main(int argc, char **argv)
{
	int nthreads, t, v;

	if (argc != 3 && !(argc == 4 && !strcmp(argv[3], "stay")))
		return 2;
	stay = argc == 4;
	nthreads = atoi(argv[1]);
	nrec = strtoul(argv[2], NULL, 0);
	if (nthreads < 1 || nthreads > MAX_THREADS || !nrec || nrec > 0xffffffffUL)
		return 2;
	if (ae_trbuf_register_table(__start___ae_seqtab,
				    __stop___ae_seqtab - __start___ae_seqtab))
		return 3;
	/* ---- traced from here: no libc ---- */
	for (t = 1; t < nthreads; t++)
		if (trbuf_clone_thread(prod_run, t,
				       thread_stacks[t] + sizeof(thread_stacks[t]),
				       &tid_words[t]) < 0)
			ae_sys1(__NR_exit_group, 4);
	prod_run(0);
	for (t = 1; t < nthreads; t++)
		while ((v = __atomic_load_n(&tid_words[t], __ATOMIC_ACQUIRE)) != 0)
			ae_sys4(__NR_futex, &tid_words[t], FUTEX_WAIT, v, 0);
	for (;;)
		ae_sys1(__NR_exit_group, 0);
}
