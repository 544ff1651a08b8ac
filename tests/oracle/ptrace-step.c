// SPDX-License-Identifier: GPL-2.0
/*
 * ae-step: the ptrace single-step oracle.
 *
 *   ae-step [-o FILE] [--from-symbol SYM] [--from ADDR] -- prog args...
 *
 * Runs prog natively (ASLR off, exactly the given argv, unchanged
 * environment), single-steps it from the first user instruction after
 * execve to its exit, and writes one line per executed instruction in
 * valgrind lackey's format "I  %08lx,%d" (address, length).
 *
 * An instruction counts as executed when the single-step trap that follows
 * it arrives. Stops that execute nothing are not counted:
 *   - a signal-delivery-stop (async signal, fault): the instruction at rip
 *     did not run; we resume single-stepping WITH the signal so the handler
 *     is traced;
 *   - the SIGTRAP the kernel reports after building a signal frame while
 *     stepping (si_code == SIGTRAP from ptrace_notify(), not TRAP_TRACE or
 *     TRAP_BRKPT): rip is the handler's first instruction, not yet run.
 * The last instruction before a normal exit (the exit_group syscall) is
 * counted; an instruction interrupted by a fatal signal is not.
 * Each iteration of a rep-prefixed instruction is one trap, hence one line.
 * fork/vfork/clone are errors: the oracle follows one thread only, unless
 * --split DIR is given (one trace per thread and program, see below;
 * with --data each task's data records come from its own registers).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <capstone/capstone.h>
#include <cpuid.h>

#define RIP_OFF offsetof(struct user_regs_struct, rip)

#include "step-data.c"

/* Open-addressing cache: instruction address -> length. */
struct len_cache {
	uint64_t *addr;
	uint8_t *len;
	size_t mask;
	size_t used;
};

static int cache_init(struct len_cache *c, size_t n)
{
	c->addr = calloc(n, sizeof(*c->addr));
	c->len = calloc(n, 1);
	c->mask = n - 1;
	c->used = 0;
	return c->addr && c->len ? 0 : -ENOMEM;
}

static size_t cache_slot(const struct len_cache *c, uint64_t a)
{
	size_t i = (size_t)((a * 0x9e3779b97f4a7c15ull) >> 20) & c->mask;

	while (c->len[i] && c->addr[i] != a)
		i = (i + 1) & c->mask;
	return i;
}

static int cache_grow(struct len_cache *c)
{
	struct len_cache n;
	size_t i;

	if (cache_init(&n, (c->mask + 1) * 2))
		return -ENOMEM;
	for (i = 0; i <= c->mask; i++) {
		if (c->len[i]) {
			size_t j = cache_slot(&n, c->addr[i]);

			n.addr[j] = c->addr[i];
			n.len[j] = c->len[i];
			n.used++;
		}
	}
	free(c->addr);
	free(c->len);
	*c = n;
	return 0;
}

struct stepper {
	pid_t pid;
	csh cs;
	cs_insn *insn;
	struct len_cache cache;
	FILE *out;
	uint64_t from;		/* 0: trace from the start */
	int started;
	unsigned long long count;
	int data;		/* --data: data records after each I line */
	csh csd;		/* capstone with detail, for --data */
	cs_insn *dinsn;
	struct step_data pd;	/* the pending instruction's records */
};

/* Length of the instruction at @a in task @pid (lengths cached in @c), or -errno. */
static int insn_len_of(struct stepper *s, pid_t pid, struct len_cache *c, uint64_t a)
{
	uint8_t buf[16];
	struct iovec local = { buf, sizeof(buf) };
	struct iovec remote = { (void *)a, sizeof(buf) };
	const uint8_t *code = buf;
	size_t size;
	uint64_t addr = a;
	ssize_t got;
	size_t i;

	i = cache_slot(c, a);
	if (c->len[i])
		return c->len[i];

	got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (got <= 0) {
		/* Fallback (e.g. pages process_vm_readv cannot read). */
		for (got = 0; got < (ssize_t)sizeof(buf); got += 8) {
			long w;

			errno = 0;
			w = ptrace(PTRACE_PEEKTEXT, pid, a + got, 0);
			if (errno)
				break;
			memcpy(buf + got, &w, 8);
		}
		if (got <= 0) {
			fprintf(stderr, "ae-step: cannot read code at %#llx\n",
				(unsigned long long)a);
			return -EFAULT;
		}
	}
	size = got;
	if (!cs_disasm_iter(s->cs, &code, &size, &addr, s->insn)) {
		fprintf(stderr, "ae-step: capstone cannot decode at %#llx\n",
			(unsigned long long)a);
		return -EINVAL;
	}
	if (c->used * 2 > c->mask) {
		if (cache_grow(c))
			return -ENOMEM;
		i = cache_slot(c, a);
	}
	c->addr[i] = a;
	c->len[i] = s->insn->size;
	c->used++;
	return s->insn->size;
}

/* Length of the instruction at @a in the (single) tracee, or -errno. */
static int insn_len(struct stepper *s, uint64_t a)
{
	return insn_len_of(s, s->pid, &s->cache, a);
}

/* The data records of one instruction, after its I line. */
static void emit_data(FILE *out, const struct step_data *pd)
{
	int i;

	for (i = 0; i < pd->n; i++)
		fprintf(out, " %c %08llx,%u\n", pd->r[i].kind,
			(unsigned long long)pd->r[i].addr, pd->r[i].size);
}

static int emit(struct stepper *s, uint64_t a)
{
	int len;

	if (!s->started) {
		if (a != s->from)
			return 0;
		s->started = 1;
	}
	len = insn_len(s, a);
	if (len < 0)
		return len;
	s->count++;
	fprintf(s->out, "I  %08llx,%d\n", (unsigned long long)a, len);
	if (s->data)
		emit_data(s->out, &s->pd);
	return 0;
}

/*
 * --data: computes into @pd the data records of the instruction at @a in
 * task @pid, from the registers before it runs. Returns 0 or -errno.
 */
static int data_fetch_of(struct stepper *s, pid_t pid, struct step_data *pd, uint64_t a)
{
	struct user_regs_struct regs;
	uint8_t buf[16];
	struct iovec local = { buf, sizeof(buf) };
	struct iovec remote = { (void *)a, sizeof(buf) };
	const uint8_t *code = buf;
	size_t size;
	uint64_t addr = a;
	ssize_t got;
	int err;

	if (ptrace(PTRACE_GETREGS, pid, 0, &regs) < 0) {
		perror("ae-step: PTRACE_GETREGS");
		return -errno;
	}
	got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (got <= 0) {
		for (got = 0; got < (ssize_t)sizeof(buf); got += 8) {
			long w;

			errno = 0;
			w = ptrace(PTRACE_PEEKTEXT, pid, a + got, 0);
			if (errno)
				break;
			memcpy(buf + got, &w, 8);
		}
		if (got <= 0) {
			fprintf(stderr, "ae-step: cannot read code at %#llx\n",
				(unsigned long long)a);
			return -EFAULT;
		}
	}
	size = got;
	if (!cs_disasm_iter(s->csd, &code, &size, &addr, s->dinsn)) {
		fprintf(stderr, "ae-step: capstone cannot decode at %#llx\n",
			(unsigned long long)a);
		return -EINVAL;
	}
	err = step_data_of(s->dinsn, &regs, pid, pd);
	if (err == -EOPNOTSUPP)
		fprintf(stderr, "ae-step: --data: '%s %s' at %#llx: an EVEX scatter or gather/scatter prefetch, whose vector index capstone 4 decodes as a general register; its accesses are not computed\n",
			s->dinsn->mnemonic, s->dinsn->op_str, (unsigned long long)a);
	else if (err == -EIO)
		fprintf(stderr, "ae-step: --data: cannot read the registers of '%s %s' at %#llx\n",
			s->dinsn->mnemonic, s->dinsn->op_str, (unsigned long long)a);
	else if (err)
		fprintf(stderr, "ae-step: --data: unknown accesses of '%s %s' at %#llx\n",
			s->dinsn->mnemonic, s->dinsn->op_str, (unsigned long long)a);
	return err;
}

/*
 * --data: did the step stop a gather part done? A page fault on one of
 * its elements, taken after others loaded, returns to it with their mask
 * bits cleared and the step trap already due, rip still on it (seen on
 * this AMD machine). It runs again for the rest: one instruction, whose
 * accesses are those @pd computed from the mask it began with, so
 * neither emitted nor fetched again here.
 */
static long get_rip(pid_t pid);

static int gather_restarts(struct stepper *s, pid_t pid, const struct step_data *pd,
			   uint64_t pending)
{
	uint64_t rip;

	if (!s->data || !pd->gather)
		return 0;
	errno = 0;
	rip = get_rip(pid);
	return !errno && rip == pending;
}

/* data_fetch_of() for the (single) tracee into s->pd. */
static int data_fetch(struct stepper *s, uint64_t a)
{
	return data_fetch_of(s, s->pid, &s->pd, a);
}

/* Address of symbol @name in the ELF file @path, or 0. */
static uint64_t elf_symbol(const char *path, const char *name)
{
	uint64_t val = 0;
	Elf_Scn *scn = NULL;
	Elf *e;
	int fd;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return 0;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && !val && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(d, i, &sym))
				break;
			n = elf_strptr(e, sh.sh_link, sym.st_name);
			if (n && !strcmp(n, name) && sym.st_value) {
				val = sym.st_value;
				break;
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return val;
}

static long get_rip(pid_t pid)
{
	return ptrace(PTRACE_PEEKUSER, pid, RIP_OFF, 0);
}

/*
 * Run the cpuid at pc (an instruction of len bytes) for the stopped
 * tracee: a hypervisor that emulates cpuid may drop its single-step trap,
 * and the next instruction would then run unseen (seen on Firecracker).
 * The stepper's own cpuid answers as the tracee's would on this machine.
 * Returns 1 when it ran (rip is past it), 0 when pc holds no cpuid, -1.
 */
static int step_cpuid(pid_t pid, uint64_t pc, int len)
{
	struct user_regs_struct r;
	unsigned int a, b, c, d;
	long w;

	if (len != 2)
		return 0;
	errno = 0;
	w = ptrace(PTRACE_PEEKTEXT, pid, pc, 0);
	if (errno || (w & 0xffff) != 0xa20f)
		return 0;
	if (ptrace(PTRACE_GETREGS, pid, 0, &r) < 0 || r.rip != pc)
		return 0;
	__cpuid_count((unsigned int)r.rax, (unsigned int)r.rcx, a, b, c, d);
	r.rax = a;
	r.rbx = b;
	r.rcx = c;
	r.rdx = d;
	r.rip = pc + 2;
	if (ptrace(PTRACE_SETREGS, pid, 0, &r) < 0) {
		perror("ae-step: SETREGS after cpuid");
		return -1;
	}
	return 1;
}

/* The next instruction at the tracee's rip into *pending, decoded now
 * (after exit_group the code cannot be read). Returns 0 or -1. */
static int fetch_pending(struct stepper *s, uint64_t *pending)
{
	errno = 0;
	*pending = get_rip(s->pid);
	if (errno) {
		perror("ae-step: PEEKUSER rip");
		return -1;
	}
	if (s->started || *pending == s->from) {
		if (insn_len(s, *pending) < 0)
			return -1;
		if (s->data && data_fetch(s, *pending))
			return -1;
	}
	return 0;
}

/* Steps from the stop at @entry to the end; returns the exit status. */
static int trace(struct stepper *s, uint64_t entry)
{
	int status, inject = 0, injected = 0, have_pending = 1;
	uint64_t pending = entry;

	if (s->data && (s->started || pending == s->from) && data_fetch(s, pending))
		return -1;
	for (;;) {
		if (!inject && have_pending && (s->started || pending == s->from)) {
			int r = step_cpuid(s->pid, pending, insn_len(s, pending));

			if (r < 0 || (r && (emit(s, pending) || fetch_pending(s, &pending))))
				return -1;
			if (r)
				continue;
		}
		if (ptrace(PTRACE_SINGLESTEP, s->pid, 0, inject) < 0) {
			perror("ae-step: PTRACE_SINGLESTEP");
			return -1;
		}
		injected = inject;
		inject = 0;
		if (waitpid(s->pid, &status, __WALL) < 0) {
			perror("ae-step: waitpid");
			return -1;
		}
		if (WIFEXITED(status)) {
			/* The exit syscall ran without a trap after it. */
			if (have_pending && !injected && emit(s, pending))
				return -1;
			return WEXITSTATUS(status);
		}
		if (WIFSIGNALED(status)) {
			fprintf(stderr, "ae-step: %d killed by signal %d\n",
				s->pid, WTERMSIG(status));
			return 128 + WTERMSIG(status);
		}
		if (!WIFSTOPPED(status))
			continue;
		if (status >> 16) {
			fprintf(stderr,
				"ae-step: tracee forked/cloned (event %d): single-threaded oracle only\n",
				status >> 16);
			kill(s->pid, SIGKILL);
			return -1;
		}
		if (WSTOPSIG(status) == SIGTRAP) {
			int executed = 1;

			if (injected) {
				siginfo_t si;

				/* Trap after building a handler frame? */
				if (!ptrace(PTRACE_GETSIGINFO, s->pid, 0, &si) &&
				    si.si_code == SIGTRAP)
					executed = 0;
			}
			if (executed && have_pending && gather_restarts(s, s->pid, &s->pd, pending))
				continue;
			if (executed && have_pending && emit(s, pending))
				return -1;
		} else {
			/* Signal-delivery-stop: rip did not run; deliver it. */
			inject = WSTOPSIG(status);
		}
		if (fetch_pending(s, &pending))
			return -1;
		have_pending = 1;
	}
}

/*
 * --split DIR: follow every thread and child (clone, fork, vfork, exec) and
 * write one trace per thread and program image,
 * DIR/<pid>.<tid>.<program>.lackey (pid = thread group id, program = the
 * basename of the executable). A task that execs gets one file per
 * program image; the execve syscall is the last line of the old image's
 * file. The K-th image (K > 1) of a program under one pid and tid is
 * DIR/<pid>.<tid>.<program>.K.lackey (".dup" added to a name another
 * image has), as aetrace regen --split names it.
 * A new thread or child's file starts at its first instruction after the
 * clone/fork syscall (which belongs to the parent). Each task is stepped on
 * its own; stops are taken in whatever order the kernel reports them.
 * A system call restarted after an ignored signal (a blocking wait4
 * interrupted by SIGCHLD) counts once, as in the program's own stream.
 */
struct img {
	char path[PATH_MAX];
	struct len_cache cache;
	struct img *next;
};

struct task {
	pid_t tid, pid;
	int fresh;		/* auto-attached, its first SIGSTOP not seen */
	int inject, injected, have_pending;
	uint64_t pending;
	struct step_data pd;	/* --data: the pending instruction's records */
	struct img *img;
	FILE *out;
	char *obuf;
	struct task *next;
};

struct split {
	struct stepper *s;
	const char *dir;
	FILE *forks;		/* --forks: "parent-tid child-tid" per creation */
	struct img *imgs;
	struct task *tasks;
	struct opened {		/* every task image's file so far */
		pid_t pid, tid;
		char *base, *path;
	} *opened;
	size_t nopened;
	int err;
};

static struct task *task_find(struct split *sp, pid_t tid)
{
	for (struct task *t = sp->tasks; t; t = t->next)
		if (t->tid == tid)
			return t;
	return NULL;
}

static struct task *task_new(struct split *sp, pid_t tid)
{
	struct task *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->tid = tid;
	t->fresh = 1;
	t->next = sp->tasks;
	sp->tasks = t;
	return t;
}

static void task_free(struct split *sp, struct task *t)
{
	for (struct task **pp = &sp->tasks; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	}
	free(t);
}

/* Thread group id of @tid from /proc, or -1. */
static pid_t tgid_of(pid_t tid)
{
	char path[64], line[256];
	pid_t pid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &pid) == 1)
			break;
	fclose(f);
	return pid;
}

/* Closes @t's current file; returns 0 or -1 after saying why. */
static int task_close(struct split *sp, struct task *t)
{
	int ret = 0;

	if (!t->out)
		return 0;
	if (fflush(t->out) || ferror(t->out)) {
		fprintf(stderr, "ae-step: writing the trace of task %d: %s\n", t->tid,
			strerror(errno));
		ret = -1;
	}
	fclose(t->out);
	free(t->obuf);
	t->out = NULL;
	t->obuf = NULL;
	return ret;
}

/* Opens DIR/<pid>.<tid>.<program>[.K].lackey for @t's current image. */
static int task_open(struct split *sp, struct task *t)
{
	char exe[PATH_MAX], path[PATH_MAX + 64];
	struct opened *op;
	const char *base;
	struct img *im;
	int k = 1;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", t->tid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0) {
		fprintf(stderr, "ae-step: %s: %s\n", path, strerror(errno));
		return -1;
	}
	exe[n] = 0;
	t->pid = tgid_of(t->tid);
	if (t->pid < 0)
		t->pid = t->tid;
	for (im = sp->imgs; im; im = im->next)
		if (!strcmp(im->path, exe))
			break;
	if (!im) {
		im = calloc(1, sizeof(*im));
		if (!im || cache_init(&im->cache, 1 << 12)) {
			fprintf(stderr, "ae-step: out of memory\n");
			return -1;
		}
		snprintf(im->path, sizeof(im->path), "%s", exe);
		im->next = sp->imgs;
		sp->imgs = im;
	}
	t->img = im;
	base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	for (size_t i = 0; i < sp->nopened; i++)
		k += sp->opened[i].pid == t->pid && sp->opened[i].tid == t->tid &&
		     !strcmp(sp->opened[i].base, base);
	if (k > 1)
		snprintf(path, sizeof(path), "%s/%d.%d.%s.%d", sp->dir, t->pid, t->tid, base, k);
	else
		snprintf(path, sizeof(path), "%s/%d.%d.%s", sp->dir, t->pid, t->tid, base);
	/* another image's name (a program named like PROG.K): ".dup" more */
	for (size_t i = 0; i < sp->nopened; i++) {
		if (!strcmp(sp->opened[i].path, path)) {
			if (strlen(path) + sizeof(".dup.lackey") > sizeof(path)) {
				fprintf(stderr, "ae-step: %s: name too long\n", path);
				return -1;
			}
			strcat(path, ".dup");
			i = -1;	/* (again from the first) */
		}
	}
	op = realloc(sp->opened, (sp->nopened + 1) * sizeof(*op));
	if (!op) {
		fprintf(stderr, "ae-step: out of memory\n");
		return -1;
	}
	sp->opened = op;
	op += sp->nopened;
	op->pid = t->pid;
	op->tid = t->tid;
	op->base = strdup(base);
	op->path = strdup(path);
	if (!op->base || !op->path) {
		free(op->base);
		free(op->path);
		fprintf(stderr, "ae-step: out of memory\n");
		return -1;
	}
	sp->nopened++;
	strncat(path, ".lackey", sizeof(path) - strlen(path) - 1);
	t->out = fopen(path, "w");
	if (!t->out) {
		fprintf(stderr, "ae-step: %s: %s\n", path, strerror(errno));
		return -1;
	}
	t->obuf = malloc(1 << 16);
	if (t->obuf)
		setvbuf(t->out, t->obuf, _IOFBF, 1 << 16);
	return 0;
}

static int task_emit(struct split *sp, struct task *t, uint64_t a)
{
	int len = insn_len_of(sp->s, t->tid, &t->img->cache, a);

	if (len < 0)
		return len;
	sp->s->count++;
	fprintf(t->out, "I  %08llx,%d\n", (unsigned long long)a, len);
	if (sp->s->data)
		emit_data(t->out, &t->pd);
	return 0;
}

/* A new pending instruction at @t's rip, decoded while the code is there. */
static int task_fetch(struct split *sp, struct task *t)
{
	errno = 0;
	t->pending = get_rip(t->tid);
	if (errno == ESRCH) {
		/* killed between its stop and now (another thread's exec,
		 * SIGKILL): it executes nothing more; its exit is reaped later */
		t->have_pending = 0;
		return 0;
	}
	if (errno) {
		fprintf(stderr, "ae-step: PEEKUSER rip of %d: %s\n", t->tid, strerror(errno));
		return -1;
	}
	t->have_pending = 1;
	if (insn_len_of(sp->s, t->tid, &t->img->cache, t->pending) < 0)
		return -1;
	return sp->s->data && data_fetch_of(sp->s, t->tid, &t->pd, t->pending) ? -1 : 0;
}

/* One ptrace event stop of @t; returns 0, or -1 on a failure. */
static int task_event(struct split *sp, struct task *t, int event)
{
	unsigned long msg = 0;

	switch (event) {
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE:
		/* The child stops with SIGSTOP before its first instruction. */
		ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &msg);
		if (sp->forks)
			fprintf(sp->forks, "%d %lu\n", t->tid, msg);
		if (!task_find(sp, (pid_t)msg) && !task_new(sp, (pid_t)msg))
			return -1;
		return 0;
	case PTRACE_EVENT_EXEC:
		/* The execve syscall ran: the old program's last instruction. */
		if (t->have_pending && task_emit(sp, t, t->pending))
			return -1;
		if (task_close(sp, t) || task_open(sp, t))
			return -1;
		/* The step trap at the end of execve comes next, at the entry:
		 * nothing of the new image has run yet. */
		t->injected = 0;
		t->have_pending = 0;
		return 0;
	case PTRACE_EVENT_EXIT:
		/* The pending instruction ran unless rip is still on it
		 * (killed by a signal, or by another thread's exit_group). */
		errno = 0;
		msg = get_rip(t->tid);
		if (!errno && t->have_pending && msg != t->pending &&
		    task_emit(sp, t, t->pending))
			return -1;
		t->have_pending = 0;
		return task_close(sp, t);
	}
	return 0;
}

/* One stop of a known task that is not an event; see trace(). */
static int task_stop(struct split *sp, struct task *t, int sig)
{
	if (t->fresh) {
		/* First stop of an auto-attached child: its SIGSTOP. */
		t->fresh = 0;
		if (sig != SIGSTOP)
			t->inject = sig;
		if (task_open(sp, t))
			return -1;
		return task_fetch(sp, t);
	}
	if (sig == SIGTRAP) {
		int executed = 1;

		if (t->injected) {
			siginfo_t si;

			/*
			 * Not an instruction: the trap after building a handler
			 * frame, or the syscall-exit trap of a system call the
			 * kernel restarted after an ignored signal (rip is back
			 * after the syscall that was already counted).
			 */
			if (!ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) &&
			    (si.si_code == SIGTRAP ||
			     (si.si_code == TRAP_BRKPT && (uint64_t)get_rip(t->tid) == t->pending)))
				executed = 0;
		}
		if (executed && t->have_pending &&
		    gather_restarts(sp->s, t->tid, &t->pd, t->pending))
			return 0;
		if (executed && t->have_pending && task_emit(sp, t, t->pending))
			return -1;
	} else {
		t->inject = sig;
	}
	return task_fetch(sp, t);
}

/* Steps every task from the root's stop at its entry; returns the root's
 * exit status, or -1. */
static int trace_split(struct stepper *s, const char *dir, FILE *forks)
{
	struct split sp = { .s = s, .dir = dir, .forks = forks };
	struct task *root = task_new(&sp, s->pid);
	int status, rc = -1, root_status = -1;
	pid_t p;

	if (!root)
		return -1;
	root->fresh = 0;
	if (task_open(&sp, root) || task_fetch(&sp, root))
		return -1;
	if (ptrace(PTRACE_SINGLESTEP, root->tid, 0, 0) < 0) {
		perror("ae-step: PTRACE_SINGLESTEP");
		return -1;
	}
	while ((p = waitpid(-1, &status, __WALL)) > 0 || errno == EINTR) {
		struct task *t;
		int event, sig;

		if (p < 0)
			continue;
		t = task_find(&sp, p);
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			if (p == s->pid)
				root_status = WIFEXITED(status) ? WEXITSTATUS(status) :
					128 + WTERMSIG(status);
			if (t) {
				if (task_close(&sp, t))
					sp.err = 1;
				task_free(&sp, t);
			}
			continue;
		}
		if (!WIFSTOPPED(status))
			continue;
		if (!t && !(t = task_new(&sp, p))) {
			sp.err = 1;
			break;
		}
		event = status >> 16;
		sig = WSTOPSIG(status);
		if (event == PTRACE_EVENT_STOP || (!event && !t->fresh && sig != SIGTRAP &&
		    ptrace(PTRACE_GETSIGINFO, p, 0, &(siginfo_t){ 0 }) < 0)) {
			/* group-stop: resume (job control is not followed) */
			ptrace(PTRACE_SINGLESTEP, p, 0, 0);
			continue;
		}
		if (event == PTRACE_EVENT_EXEC) {
			unsigned long former = p;
			struct task *x;

			/* a non-leader thread exec'd: it goes on as the leader */
			ptrace(PTRACE_GETEVENTMSG, p, 0, &former);
			if ((pid_t)former != p && (x = task_find(&sp, (pid_t)former))) {
				if (task_close(&sp, t))
					sp.err = 1;
				task_free(&sp, t);
				x->tid = p;
				t = x;
			}
		}
		if (event ? task_event(&sp, t, event) : task_stop(&sp, t, sig)) {
			sp.err = 1;
			kill(s->pid, SIGKILL);
			ptrace(PTRACE_CONT, p, 0, SIGKILL);
			continue;
		}
		while (!event && !t->inject && t->have_pending && !sp.err) {
			int r = step_cpuid(p, t->pending,
					   insn_len_of(s, p, &t->img->cache, t->pending));

			if (r < 0 || (r && (task_emit(&sp, t, t->pending) || task_fetch(&sp, t))))
				sp.err = 1;
			if (r <= 0)
				break;
		}
		t->injected = event ? 0 : t->inject;
		if (ptrace(event == PTRACE_EVENT_EXIT ? PTRACE_CONT : PTRACE_SINGLESTEP,
			   p, 0, event ? 0 : t->inject) < 0 && errno != ESRCH)
			fprintf(stderr, "ae-step: resuming %d: %s\n", p, strerror(errno));
		t->inject = 0;
	}
	while (sp.tasks) {
		if (task_close(&sp, sp.tasks))
			sp.err = 1;
		task_free(&sp, sp.tasks);
	}
	while (sp.nopened) {
		sp.nopened--;
		free(sp.opened[sp.nopened].base);
		free(sp.opened[sp.nopened].path);
	}
	free(sp.opened);
	if (!sp.err)
		rc = root_status;
	return rc;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: ae-step [-o FILE] [--data] [--from-symbol SYM | --from ADDR] -- prog args...\n"
		"       ae-step --split DIR [--forks FILE] [--data] -- prog args...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct stepper s = { .out = stdout };
	const char *outpath = NULL, *sym = NULL, *split = NULL, *forkpath = NULL;
	FILE *forks = NULL;
	struct timespec t0, t1;
	static char obuf[1 << 20];
	int i, status, rc;
	double dt;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			outpath = argv[++i];
		} else if (!strcmp(argv[i], "--from-symbol") && i + 1 < argc) {
			sym = argv[++i];
		} else if (!strcmp(argv[i], "--split") && i + 1 < argc) {
			split = argv[++i];
		} else if (!strcmp(argv[i], "--data")) {
			s.data = 1;
		} else if (!strcmp(argv[i], "--forks") && i + 1 < argc) {
			forkpath = argv[++i];
		} else if (!strcmp(argv[i], "--from") && i + 1 < argc) {
			s.from = strtoull(argv[++i], NULL, 16);
		} else {
			usage();
		}
	}
	if (i >= argc)
		usage();
	if (split && (outpath || sym || s.from)) {
		fprintf(stderr, "ae-step: --split writes every trace from the start: no -o, --from or --from-symbol\n");
		return 2;
	}
	if (split) {
		struct stat st;

		if (stat(split, &st) || !S_ISDIR(st.st_mode)) {
			fprintf(stderr, "ae-step: --split %s: not a directory\n", split);
			return 2;
		}
	}
	if (forkpath && !split) {
		fprintf(stderr, "ae-step: --forks needs --split\n");
		return 2;
	}
	if (forkpath && !(forks = fopen(forkpath, "w"))) {
		fprintf(stderr, "ae-step: %s: %s\n", forkpath, strerror(errno));
		return 2;
	}
	if (sym) {
		s.from = elf_symbol(argv[i], sym);
		if (!s.from) {
			fprintf(stderr, "ae-step: symbol '%s' not found in %s\n",
				sym, argv[i]);
			return 2;
		}
	}
	s.started = !s.from;
	if (outpath) {
		s.out = fopen(outpath, "w");
		if (!s.out) {
			fprintf(stderr, "ae-step: %s: %s\n", outpath,
				strerror(errno));
			return 2;
		}
	}
	setvbuf(s.out, obuf, _IOFBF, sizeof(obuf));
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &s.cs) != CS_ERR_OK)
		return 2;
	s.insn = cs_malloc(s.cs);
	if (s.data) {
		if (cs_open(CS_ARCH_X86, CS_MODE_64, &s.csd) != CS_ERR_OK ||
		    cs_option(s.csd, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK)
			return 2;
		s.dinsn = cs_malloc(s.csd);
	}
	if (cache_init(&s.cache, 1 << 16))
		return 2;

	s.pid = fork();
	if (s.pid < 0) {
		perror("ae-step: fork");
		return 2;
	}
	if (s.pid == 0) {
		if (personality(ADDR_NO_RANDOMIZE) < 0)
			perror("ae-step: personality");
		if (ptrace(PTRACE_TRACEME, 0, 0, 0) < 0)
			_exit(127);
		execv(argv[i], &argv[i]);
		fprintf(stderr, "ae-step: exec %s: %s\n", argv[i],
			strerror(errno));
		_exit(127);
	}
	/* The SIGTRAP after execve: rip is the first user instruction. */
	if (waitpid(s.pid, &status, 0) < 0 || !WIFSTOPPED(status)) {
		fprintf(stderr, "ae-step: %s did not start\n", argv[i]);
		return 2;
	}
	ptrace(PTRACE_SETOPTIONS, s.pid, 0,
	       PTRACE_O_EXITKILL | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
	       PTRACE_O_TRACECLONE |
	       (split ? PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT : 0));

	clock_gettime(CLOCK_MONOTONIC, &t0);
	{
		uint64_t entry;

		errno = 0;
		entry = get_rip(s.pid);
		if (errno) {
			perror("ae-step: PEEKUSER rip");
			return 125;
		}
		rc = split ? trace_split(&s, split, forks) : trace(&s, entry);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (forks && fclose(forks)) {
		fprintf(stderr, "ae-step: write %s: %s\n", forkpath, strerror(errno));
		return 2;
	}
	if (fflush(s.out) || (outpath && fclose(s.out))) {
		fprintf(stderr, "ae-step: write %s: %s\n",
			outpath ? outpath : "stdout", strerror(errno));
		return 2;
	}
	dt = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (getenv("AE_STEP_STATS"))
		fprintf(stderr, "ae-step: %llu instructions in %.2f s (%.0f/s)\n",
			s.count, dt, dt > 0 ? s.count / dt : 0.0);
	/* The tracee's status, or 125 when the oracle itself failed. */
	return rc < 0 ? 125 : rc;
}
