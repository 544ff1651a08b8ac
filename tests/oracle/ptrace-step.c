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
 * fork/vfork/clone are errors: the oracle follows one thread only.
 */
#include <errno.h>
#include <fcntl.h>
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
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <capstone/capstone.h>

#define RIP_OFF offsetof(struct user_regs_struct, rip)

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
};

/* Length of the instruction at @a in the tracee, or -errno. */
static int insn_len(struct stepper *s, uint64_t a)
{
	uint8_t buf[16];
	struct iovec local = { buf, sizeof(buf) };
	struct iovec remote = { (void *)a, sizeof(buf) };
	const uint8_t *code = buf;
	size_t size;
	uint64_t addr = a;
	ssize_t got;
	size_t i;

	i = cache_slot(&s->cache, a);
	if (s->cache.len[i])
		return s->cache.len[i];

	got = process_vm_readv(s->pid, &local, 1, &remote, 1, 0);
	if (got <= 0) {
		/* Fallback (e.g. pages process_vm_readv cannot read). */
		for (got = 0; got < (ssize_t)sizeof(buf); got += 8) {
			long w;

			errno = 0;
			w = ptrace(PTRACE_PEEKTEXT, s->pid, a + got, 0);
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
	if (s->cache.used * 2 > s->cache.mask) {
		if (cache_grow(&s->cache))
			return -ENOMEM;
		i = cache_slot(&s->cache, a);
	}
	s->cache.addr[i] = a;
	s->cache.len[i] = s->insn->size;
	s->cache.used++;
	return s->insn->size;
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
	return 0;
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

/* Steps from the stop at @entry to the end; returns the exit status. */
static int trace(struct stepper *s, uint64_t entry)
{
	int status, inject = 0, injected = 0, have_pending = 1;
	uint64_t pending = entry;

	for (;;) {
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
			if (executed && have_pending && emit(s, pending))
				return -1;
		} else {
			/* Signal-delivery-stop: rip did not run; deliver it. */
			inject = WSTOPSIG(status);
		}
		errno = 0;
		pending = get_rip(s->pid);
		if (errno) {
			perror("ae-step: PEEKUSER rip");
			return -1;
		}
		/* Decode now: after exit_group the code cannot be read. */
		if (s->started || pending == s->from) {
			if (insn_len(s, pending) < 0)
				return -1;
		}
		have_pending = 1;
	}
}

static void usage(void)
{
	fprintf(stderr,
		"usage: ae-step [-o FILE] [--from-symbol SYM | --from ADDR] -- prog args...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct stepper s = { .out = stdout };
	const char *outpath = NULL, *sym = NULL;
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
		} else if (!strcmp(argv[i], "--from") && i + 1 < argc) {
			s.from = strtoull(argv[++i], NULL, 16);
		} else {
			usage();
		}
	}
	if (i >= argc)
		usage();
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
	       PTRACE_O_TRACECLONE);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	{
		uint64_t entry;

		errno = 0;
		entry = get_rip(s.pid);
		if (errno) {
			perror("ae-step: PEEKUSER rip");
			return 125;
		}
		rc = trace(&s, entry);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
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
