// SPDX-License-Identifier: MIT
/*
 * Unit test of the library-routine expander's emulator (analysis/memfn.c)
 * on hand-assembled routines: the instructions it reports and the
 * registers each starts with follow from the code and the arguments
 * alone (a byte-loop strlen: 1 + 4 per byte + 4 instructions, %rax the
 * byte's address at every compare); the synthetic memory has the mark
 * where it was asked and nothing of an earlier run's writes; bad input
 * (a routine that never returns, code that jumps nowhere) is an error,
 * not a crash; the callback can stop a run. Compares: the synthetic
 * memory agrees with a stop record (a byte-loop memcmp stops there and
 * returns the recorded bytes' difference), overlapping strings get the
 * one fill that agrees, and records no memory can produce (equal bytes
 * where it stopped, a stop past n or beyond the expander's memory) are
 * errors.
 */
#include <stdio.h>
#include <string.h>

#include <aetrace/schema.h>

#include "../../analysis/memfn.h"

#define CODE	0x401000ull
#define RET	0x401100ull	/* the "return address": a place in the code page */

/*
 * 0:  mov %rdi,%rax         3: cmpb $0,(%rax)   6: je 14
 * 8:  add $1,%rax          12: jmp 3           14: sub %rdi,%rax  17: ret
 * 32: movb $0,(%rdi); ret   (a routine that writes)
 * 48: jmp 48                (never returns)
 * 64: jmp *%rax             (goes where %rax says)
 * 80: movb $0,(%rdi); add $0x40000,%rdi; jmp 80   (a new 256 KiB each time)
 * 96: a byte-loop memcmp: test %rdx,%rdx; je 125; 101: movzbl (%rdi),%eax;
 *     movzbl (%rsi),%ecx; cmp %ecx,%eax; jne 128; add $1,%rdi; add $1,%rsi;
 *     sub $1,%rdx; jne 101; 125: xor %eax,%eax; ret; 128: sub %ecx,%eax; ret
 */
static const unsigned char code[] = {
	0x48, 0x89, 0xf8, 0x80, 0x38, 0x00, 0x74, 0x06, 0x48, 0x83, 0xc0, 0x01,
	0xeb, 0xf5, 0x48, 0x29, 0xf8, 0xc3,
	[32] = 0xc6, 0x07, 0x00, 0xc3,
	[48] = 0xeb, 0xfe,
	[64] = 0xff, 0xe0,
	[80] = 0xc6, 0x07, 0x00, 0x48, 0x81, 0xc7, 0x00, 0x00, 0x04, 0x00, 0xeb, 0xf4,
	[96] = 0x48, 0x85, 0xd2, 0x74, 0x18, 0x0f, 0xb6, 0x07, 0x0f, 0xb6, 0x0e, 0x39,
	0xc8, 0x75, 0x11, 0x48, 0x83, 0xc7, 0x01, 0x48, 0x83, 0xc6, 0x01, 0x48,
	0x83, 0xea, 0x01, 0x75, 0xe8, 0x31, 0xc0, 0xc3, 0x29, 0xc8, 0xc3,
};

struct seen {
	int n, bad, stop_at;
	uint64_t rdi;
	uint64_t pcs[4096];
};

static int on_insn(void *ctx, uint64_t pc, const struct ae_df_state *r)
{
	struct seen *s = ctx;

	if (s->n < 4096)
		s->pcs[s->n] = pc;
	/* at every compare, %rax is the address of byte n */
	if (pc == CODE + 3 && r->v[0] != s->rdi + (s->n - 1) / 4)
		s->bad = 1;
	if (r->known != 0xffff)
		s->bad = 1;
	s->n++;
	return s->stop_at && s->n == s->stop_at ? 7 : 0;
}

static int tests, failed;

static void ok(int cond, const char *name)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++tests, name);
	if (!cond)
		failed = 1;
}

static int run_strlen(struct ae_memfn_emu *e, uint64_t s, uint64_t len, struct seen *sn,
		      struct ae_df_state *r)
{
	struct ae_memfn_mem m = { .fill = 1, .nmarks = 1, .mark = { { .addr = s + len, .val = 0 } } };
	char err[200];

	memset(r, 0, sizeof(*r));
	r->v[7] = s;
	r->v[4] = 0x7ffff000ff8ull;
	r->known = (1u << 7) | (1u << 4);
	memset(sn, 0, sizeof(*sn));
	sn->rdi = s;
	return ae_memfn_emu_run(e, CODE, RET, r, &m, 100000, on_insn, sn, err, sizeof(err));
}

/* Memory for memcmp(l, r, n) stopped as `stop`, then the byte-loop
 * memcmp at 96 run on it: instructions, result. */
static int run_memcmp(struct ae_memfn_emu *e, uint64_t l, uint64_t r, uint64_t n, uint64_t stop,
		      struct ae_memfn_mem *m, int *ninsn, uint32_t *want, uint64_t *res,
		      char *err, size_t errlen)
{
	static struct seen sn;
	struct ae_df_state regs;
	uint64_t limit;
	int rc;

	rc = ae_memfn_cmp_mem(e, AE_MEMFN_MEMCMP, l, r, n, stop, m, &limit, want, err, errlen);
	if (rc)
		return rc;
	memset(&regs, 0, sizeof(regs));
	regs.v[7] = l;
	regs.v[6] = r;
	regs.v[2] = n;
	regs.v[4] = 0x7ffff000ff8ull;
	regs.known = (1u << 7) | (1u << 6) | (1u << 2) | (1u << 4);
	memset(&sn, 0, sizeof(sn));
	rc = ae_memfn_emu_run(e, CODE + 96, RET, &regs, m, limit * 16 + 100, on_insn, &sn, err, errlen);
	*ninsn = sn.n;
	*res = regs.v[0];
	return rc;
}

int main(void)
{
	struct ae_memfn_code c = { CODE, code, sizeof(code) };
	struct ae_memfn_mem fill = { .fill = 1 };
	struct ae_df_state r;
	static struct seen sn;
	char err[200];
	struct ae_memfn_emu *e = ae_memfn_emu_new(&c, 1, err, sizeof(err));
	int rc, pcs_ok = 1;

	if (!e) {
		printf("not ok 1 - emulator: %s\n", err);
		return 1;
	}
	/* strlen of 5 bytes at an odd address */
	rc = run_strlen(e, 0x700000001003ull, 5, &sn, &r);
	ok(rc == 0 && sn.n == 1 + 4 * 5 + 4 && !sn.bad, "strlen of 5: 25 instructions, %rax at every byte");
	for (int i = 0; i < 5; i++)
		pcs_ok &= sn.pcs[1 + 4 * i] == CODE + 3 && sn.pcs[4 + 4 * i] == CODE + 12;
	ok(pcs_ok && sn.pcs[0] == CODE && sn.pcs[sn.n - 1] == CODE + 17, "strlen of 5: the loop's addresses");
	ok(rc == 0 && r.v[0] == 5 && r.v[4] == 0x7ffff000ff8ull + 8, "strlen of 5: returns 5, %rsp after the ret");
	/* the terminator at the start of a page, the string in the one before */
	rc = run_strlen(e, 0x700000002000ull - 3, 3, &sn, &r);
	ok(rc == 0 && r.v[0] == 3 && !sn.bad, "strlen across a page boundary");
	/* a routine that writes a zero; the next run does not see it */
	memset(&r, 0, sizeof(r));
	r.v[7] = 0x700000001003ull;
	r.v[4] = 0x7ffff000ff8ull;
	r.known = 0x90;
	memset(&sn, 0, sizeof(sn));
	rc = ae_memfn_emu_run(e, CODE + 32, RET, &r, &fill, 100, on_insn, &sn, err, sizeof(err));
	ok(rc == 0 && sn.n == 2, "a writing routine: 2 instructions");
	rc = run_strlen(e, 0x700000001003ull, 4, &sn, &r);
	ok(rc == 0 && r.v[0] == 4, "an earlier run's writes are gone");
	/* errors, not crashes */
	memset(&r, 0, sizeof(r));
	r.v[4] = 0x7ffff000ff8ull;
	r.known = 0x10;
	rc = ae_memfn_emu_run(e, CODE + 48, RET, &r, &fill, 1000, on_insn, &sn, err, sizeof(err));
	ok(rc < 0 && strstr(err, "did not return"), "a routine that never returns: an error");
	r.v[0] = 0x12345678;
	r.known |= 1;
	rc = ae_memfn_emu_run(e, CODE + 64, RET, &r, &fill, 1000, on_insn, &sn, err, sizeof(err));
	ok(rc < 0, "a jump out of the code: an error");
	/* more memory than one run may map: an error, not QEMU's abort */
	memset(&r, 0, sizeof(r));
	r.v[7] = 0x100000000000ull;
	r.v[4] = 0x7ffff000ff8ull;
	r.known = 0x90;
	memset(&sn, 0, sizeof(sn));
	rc = ae_memfn_emu_run(e, CODE + 80, RET, &r, &fill, 100000, on_insn, &sn, err, sizeof(err));
	ok(rc < 0 && strstr(err, "cannot map"), "touching too much memory: an error");
	rc = run_strlen(e, 0x700000001000ull, 2, &sn, &r);
	ok(rc == 0 && r.v[0] == 2, "the emulator works after errors");
	/* the callback stops a run */
	{
		struct ae_memfn_mem m = { .fill = 1, .nmarks = 1, .mark = { { .addr = 0x700000001010ull, .val = 0 } } };

		memset(&r, 0, sizeof(r));
		r.v[7] = 0x700000001000ull;
		r.v[4] = 0x7ffff000ff8ull;
		r.known = 0x90;
		memset(&sn, 0, sizeof(sn));
		sn.rdi = r.v[7];
		sn.stop_at = 6;
		rc = ae_memfn_emu_run(e, CODE, RET, &r, &m, 100000, on_insn, &sn, err, sizeof(err));
		ok(rc == 7 && sn.n == 6, "the callback stops the run");
	}
	/* compares: the memory agrees with the stop record, the routine
	 * stops there and returns the difference of the recorded bytes */
	{
		struct ae_memfn_mem m;
		uint64_t l = 0x700000003000ull, rr = 0x700000005001ull, res, limit;
		uint32_t want;
		int n;

		rc = run_memcmp(e, l, rr, 10, 5 | 0x61ull << 48 | 0x62ull << 56, &m, &n, &want,
				&res, err, sizeof(err));
		ok(rc == 0 && n == 2 + 5 * 8 + 4 + 2 && (uint32_t)res == (uint32_t)-1 && want == (uint32_t)-1,
		   "memcmp stopped at byte 5 ('a' < 'b'): 5 equal bytes, returns -1");
		rc = run_memcmp(e, l, rr, 7, 7, &m, &n, &want, &res, err, sizeof(err));
		ok(rc == 0 && n == 2 + 7 * 8 + 2 && res == 0 && want == 0 && m.nmarks == 0,
		   "memcmp of 7 equal bytes: no marks, returns 0");
		rc = run_memcmp(e, l, rr, 10, 5 | 0x62ull << 48 | 0x62ull << 56, &m, &n, &want, &res,
				err, sizeof(err));
		ok(rc < 0 && strstr(err, "no memory stops a compare"), "a stop on equal bytes: an error");
		rc = run_memcmp(e, l, rr, 10, 11, &m, &n, &want, &res, err, sizeof(err));
		ok(rc < 0 && strstr(err, "no memory stops a compare"), "a stop past n: an error");
		rc = ae_memfn_cmp_mem(e, AE_MEMFN_MEMCMP, l, rr, 1ull << 40, 1ull << 40, &m, &limit, &want,
				      err, sizeof(err));
		ok(rc < 0 && strstr(err, "expander's limit"), "a stop beyond the expander's memory: an error");
		/* strcmp of "cccd" and "ccccd" where the first is the second + 1:
		 * only a fill of 'c' agrees with the overlapping areas */
		rc = ae_memfn_cmp_mem(e, AE_MEMFN_STRCMP, l + 1, l, 0, 3 | 0x64ull << 48 | 0x63ull << 56,
				      &m, &limit, &want, err, sizeof(err));
		ok(rc == 0 && m.fill == 'c' && limit == 4 && want == 1, "strcmp of overlapping strings: the fill is 'c'");
		rc = ae_memfn_cmp_mem(e, AE_MEMFN_STRNCMP, l, rr, 0, 0, &m, &limit, &want, err, sizeof(err));
		ok(rc == 0 && want == 0 && m.nmarks == 0, "strncmp with n = 0 reads nothing");
		rc = ae_memfn_cmp_mem(e, AE_MEMFN_STRNCMP, l, rr, 0, 1, &m, &limit, &want, err, sizeof(err));
		ok(rc < 0, "strncmp with n = 0 that stops at 1: an error");
		rc = ae_memfn_cmp_mem(e, AE_MEMFN_STRNCMP, l, rr, 3, 2 | 0x71ull << 48 | 0x71ull << 56,
				      &m, &limit, &want, err, sizeof(err));
		ok(rc == 0 && want == 0, "strncmp stops at n - 1 on equal bytes");
		rc = ae_memfn_cmp_mem(e, AE_MEMFN_STRCMP, l, rr, 0, 4 | 0x71ull << 48 | 0x71ull << 56,
				      &m, &limit, &want, err, sizeof(err));
		ok(rc < 0, "strcmp stopping on equal nonzero bytes: an error");
	}
	ae_memfn_emu_free(e);
	printf("1..%d\n", tests);
	return failed;
}
