/* SPDX-License-Identifier: MIT */
/*
 * aerun.h - standalone capture: the traced program's threads and children
 * under ptrace, the kernel hooks (docs/ARCHITECTURE.md) emulated by the tracer
 * (overflow, rollback, signal markers, live r15 at sigreturn, fork, exec,
 * exit).
 *
 * Every traced thread writes into its own region, a virtual cpu of the
 * capture, taking sub-buffers from one shared pool: markers place each
 * event at (cpu, seq, offset) exactly as trbuf.ko does for real CPUs, so
 * one regeneration path serves both. A thread keeps its cpu for life (no
 * migration); a new thread takes the lowest free cpu (0 = the first
 * program), so a cpu hosts successive threads, each beginning with its
 * START or SWITCH_IN marker in a new sub-buffer, and the session's nr_cpus
 * (= nr_subbufs: a live thread owns one sub-buffer) bounds them. A new thread or child starts its
 * region with SWITCH_IN (its first ip and sp), its parent's stream has FORK
 * (arg = child tid, arg2 = clone flags); exec ends the old image with EXEC
 * and, when the new program is instrumented, START follows at the same
 * position; a program not built with aecc is reported and left untraced.
 */
#ifndef AERUN_H
#define AERUN_H

#include <pthread.h>
#include <stdint.h>
#include <sys/user.h>
#include <sys/types.h>
#include <linux/trbuf.h>
#include <aetrace/container.h>
#include "standalone.h"

#define AERUN_EXIT_USAGE	2	/* bad command line */
#define AERUN_EXIT_FAIL		125	/* aerun itself failed */
#define AERUN_EXIT_NOEXEC	126	/* program found but not executable */
#define AERUN_EXIT_NOENT	127	/* program not found */

/* The exec calls of the other system call entries of a 64-bit process
 * (the i386 one through int 0x80, x32), which aerun's filter traps too. */
#define AERUN_I386_EXECVE	11
#define AERUN_I386_EXECVEAT	358
#define AERUN_X32_EXECVE	(0x40000000 + 520)
#define AERUN_X32_EXECVEAT	(0x40000000 + 545)

/* In the upper half of rt_sigaction's signal number (which the kernel
 * ignores): aerun's own call, which its filter lets through (segv.c). */
#define AERUN_SEGV_TAG		0x41520000u	/* "AR" */

struct aerun_opts {
	const char *out;		/* NULL with --discard */
	uint32_t subbuf_size;
	uint32_t nr_subbufs;
	int level;
	int adapt;	/* pacing: lower the level while the program waits */
	int threads;	/* zstd worker threads (-T) */
	int quiet;
	int verbose;
	const char *prog;		/* as given */
	char *path;			/* resolved through PATH */
	char **argv;			/* program argv, argv[0] as given */
};

/* Sub-buffer states in the pool. */
enum { AERUN_SB_FREE, AERUN_SB_OWNED, AERUN_SB_QUEUED };

/* The sub-buffer pool shared with the writer thread (ring.c): each traced
 * thread owns one; committed ones are written in commit order. */
struct aerun_ring {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint32_t n;
	uint8_t *state;			/* AERUN_SB_* */
	uint32_t *len;			/* committed length */
	uint64_t *seq;			/* its sub-buffer sequence number */
	uint16_t *cpu;			/* its region */
	struct trbuf_marker **mk;	/* markers to write before its DATA */
	uint32_t *nr_mk;
	uint32_t *q;			/* commit queue of sub-buffer indexes */
	uint32_t qhead, qlen;
	uint32_t waiting;		/* 1 while the tracer waits for a free sub-buffer */
	int stop;
	int err;			/* first writer error, -errno */
	pthread_t thread;
	int have_thread;
};

struct aerun_seqtab {
	struct trbuf_seq_range *r;
	size_t n;
	int has_schema;			/* a .ae_schema section: built by aecc */
};

/* A program image some task runs. */
struct aerun_img {
	char *path;
	struct aerun_seqtab seqtab;
	int instrumented;
	struct aerun_img *next;
};

/*
 * A signal frame aerun saw the kernel build: where its ucontext is, the
 * registers saved there (gregs REG_R8 to REG_EFL) and a hash of the x87,
 * SSE and AVX state the interrupted code had (values, as ptrace reads
 * them), to tell at its sigreturn what the handler changed.
 */
#define AERUN_FRAMES		16
#define AERUN_FRAME_REGS	18
struct aerun_frame {
	uint64_t uc;
	uint64_t gregs[AERUN_FRAME_REGS];
	uint64_t fp_hash;
	int fp_ok;			/* fp_hash is the state's */
};

/* One thread aerun follows. */
struct aerun_task {
	pid_t tid, pid;			/* pid: thread group id */
	int fresh;			/* auto-attached, not started yet */
	int stopped;			/* fresh and in its first stop */
	int parent_known;		/* its creator's event was seen */
	int traced;			/* its image is instrumented */
	int active;			/* 1 its runtime has r15, 0 not yet, -1 ask the control page */
	int region;			/* owns cpu and sub-buffer cur */
	int execs;
	uint16_t cpu;
	uint32_t cur;			/* its sub-buffer */
	uint64_t cur_seq;
	uint32_t resume_off;		/* where START goes after exec */
	int in_exec;			/* between execve entry and the exec event */
	pid_t exec_tid;			/* exec'd from a non-leader: the tid it takes */
	uint64_t exec_r15, exec_ip, exec_sp, exec_cx;
	struct aerun_img *img;
	/* Signal frames not yet returned from, in delivery order. */
	struct aerun_frame frames[AERUN_FRAMES];
	unsigned int nr_frames;
	/* In rt_sigreturn: its frame, the live r15 and its marker (an index
	 * in mk, UINT32_MAX: none), which the syscall-exit stop completes
	 * from the registers restored. */
	int in_sigreturn;
	uint64_t sigret_uc, sigret_r15;
	uint32_t sigret_mk;
	/* Stepped into a handler, its SIGNAL not yet written: the signal,
	 * the registers at its delivery stop, the FPU state's hash. */
	int sig_entering, sig_num;
	int cursor_unset;		/* a new cursor not yet written into r15 */
	struct user_regs_struct sig_regs;
	struct aerun_frame sig;
	/* In rt_sigaction(SIGSEGV, act): act, which its exit stop makes the
	 * process's (segv.c). */
	int in_sigaction;
	uint64_t segv_act[4];
	/* Markers not yet attached to a commit. */
	struct trbuf_marker *mk;
	uint32_t nr_mk, cap_mk;
	struct aerun_task *next;
};

struct aerun {
	struct aerun_opts o;
	int memfd;
	uint8_t *map;			/* aerun's view of the memfd */
	size_t map_len;
	struct ae_standalone_ctl ctl;
	struct aerun_ring ring;
	struct ae_writer *w;		/* NULL with --discard */
	int out_fd;
	uint64_t out_bytes;		/* written to out_fd, the stream end included */
	struct ae_writer_pacing pacing;	/* what pacing did, at the end */
	struct aerun_seqtab seqtab;	/* of the first program */
	pid_t pid;			/* the first program's process */

	struct aerun_task *tasks;
	struct aerun_img *imgs;
	uint8_t *cpu_used;		/* per region: a live thread has it */
	uint64_t *cpu_seq;		/* per region: next sub-buffer seq */

	/* Processes whose SIGSEGV action is not the default (segv.c). */
	struct aerun_segv *segv;
	uint64_t segv_restores;		/* actions an overflow's reset undid */

	/* Markers of tasks that vanished without an exit stop. */
	struct trbuf_marker *mk;
	uint32_t nr_mk, cap_mk;

	/* Statistics. */
	uint64_t raw_bytes, commits, rollbacks, signals, sigreturns, markers;
	uint64_t lost_ends;		/* traced threads whose end aerun did not see */
	uint64_t nr_tasks, forks, execs;
	uint64_t nr_traced, nr_untraced;	/* program images (threads, execs) */
	int status;			/* wait status of the program */
	uint64_t final_ip;
	int failed;			/* aerun killed the program */
};

/* segv.c: each process's SIGSEGV action, kept across overflow faults */
/* The caught and ignored signals of tid's process (/proc/TID/status).
 * Returns 0 or -1. */
int aerun_proc_sigs(pid_t tid, uint64_t *cgt, uint64_t *ign);
/* The first program's, as it inherited it. Returns 0 or -ENOMEM. */
int aerun_segv_start(struct aerun *a, pid_t pid);
/* The seccomp stop of rt_sigaction(SIGSEGV, ...) with registers r: sets
 * t->in_sigaction when it may change the action (an exit stop follows). */
void aerun_segv_entry(struct aerun_task *t, const struct user_regs_struct *r);
/* Its exit stop: the action is the process's if the call succeeded.
 * Returns 0 or -ENOMEM. */
int aerun_segv_exit(struct aerun *a, struct aerun_task *t);
/* A new process (fork, vfork, clone without CLONE_THREAD) copies its
 * creator's; exec resets a handler to the default. Return 0 or -ENOMEM. */
int aerun_segv_fork(struct aerun *a, pid_t parent, pid_t child);
int aerun_segv_exec(struct aerun *a, pid_t pid);
/* t stopped to be delivered a SIGSEGV: an SA_RESETHAND action becomes the
 * default. Returns nothing. */
void aerun_segv_delivered(struct aerun *a, struct aerun_task *t);
/* The last thread of process pid is gone. Returns nothing. */
void aerun_segv_gone(struct aerun *a, pid_t pid);
/* t stopped at an overflow fault: the action (and the thread's block)
 * put back if the fault's SIGSEGV reset it. Returns
 * 1 when another stop of t came meanwhile (*next_status, to process
 * next), 0, or -errno. */
int aerun_segv_restore(struct aerun *a, struct aerun_task *t, int *next_status);
void aerun_segv_free(struct aerun *a);

/* seqtab.c */
int aerun_seqtab_load(struct aerun_seqtab *t, const char *path, char *err, size_t errlen);
uint64_t aerun_seqtab_rollback(const struct aerun_seqtab *t, uint64_t ip);

/* ring.c */
int aerun_ring_init(struct aerun *a);
uint8_t *aerun_subbuf(struct aerun *a, uint32_t i);
int aerun_ring_commit(struct aerun *a, struct aerun_task *t, uint32_t len);
int aerun_ring_next(struct aerun *a, struct aerun_task *t);
int aerun_ring_finish(struct aerun *a);
/* Markers mk[0..n) as MARKERS chunks of at most AERUN_MK_CHUNK each (a
 * chunk may hold at most AE_CHUNK_MAX_LEN bytes): 0 or -errno. */
int aerun_write_markers(struct aerun *a, const struct trbuf_marker *mk, size_t n);
/* Appends m to t's pending markers (aerun's, t NULL). Returns the copy, or
 * NULL when out of memory (counted as lost). */
struct trbuf_marker *aerun_add_marker(struct aerun *a, struct aerun_task *t,
				      const struct trbuf_marker *m);

/* trace.c */
int aerun_trace(struct aerun *a);

#endif /* AERUN_H */
