/* Kills inside instrumentation sequences (tests/host/kill-seq.sh): the
 * program dies by a fault at its end, and the test moves that EXIT onto
 * each instruction of the witness stubs that wrote the trace's bytes,
 * the trace cut there. Its loops have the shapes where that went wrong
 * (xz's bt_find_func and lzma_lzma_optimum_normal, killed by SIGKILL):
 * a branch whose side writes no byte before another branch whose edge
 * has a stub (the kill in that stub decides both), and a branch both of
 * whose sides join before a stub that only one of them runs (the
 * records after an instruction on one side). */
#include <stdint.h>

#define N	1536

static unsigned char buf[N + 64];
static uint32_t son[2 * N], head[256], price[64];
static uint32_t lens[16];

static uint32_t rnd(void)
{
	static uint32_t s = 12345;

	s = s * 1103515245u + 12345u;
	return s >> 16;
}

/* A binary-tree match finder (as xz's bt_find_func): the compare's
 * result picks a side, both sides rejoin at the loop's test. */
static __attribute__((noinline)) int find(uint32_t pos, uint32_t cur, int depth, uint32_t *out)
{
	uint32_t *l = &son[2 * pos], *r = &son[2 * pos + 1];
	uint32_t ll = 0, rl = 0;
	int n = 0;

	for (;;) {
		uint32_t delta = pos - cur, len;

		if (depth-- == 0 || delta >= N || cur == 0) {
			*l = *r = 0;
			return n;
		}
		len = ll < rl ? ll : rl;
		if (buf[cur + len] == buf[pos + len]) {
			while (++len < 32 && buf[cur + len] == buf[pos + len])
				;
			if (len > 2 && n < 8)
				out[n++] = len;
			if (len == 32) {
				*l = son[2 * cur];
				*r = son[2 * cur + 1];
				return n;
			}
		}
		if (buf[cur + len] < buf[pos + len]) {
			*l = cur;
			l = &son[2 * cur + 1];
			cur = *l;
			ll = len;
		} else {
			*r = cur;
			r = &son[2 * cur];
			cur = *r;
			rl = len;
		}
	}
}

/* Prices (as lzma_lzma_optimum_normal): a branch that skips a fill loop
 * on one side, then a test whose fall-through has a witness. */
static __attribute__((noinline)) uint32_t optimum(const uint32_t *m, int n, uint32_t end, int rep)
{
	uint32_t best = ~0u;

	for (int i = 0; i < n; i++) {
		uint32_t len = m[i], p;

		if (len > end) {
			for (uint32_t k = end + 1; k <= len && k < 64; k++)
				price[k] = 1u << 30;
			end = len;
		}
		p = price[len & 63] >> 4;
		if (rep)
			p += 3;
		else
			p += len * 2;
		if (p < best)
			best = p;
	}
	return best;
}

int main(int argc, char **argv)
{
	uint32_t sum = 0, out[8];

	(void)argv;
	for (int i = 0; i < N + 64; i++)
		buf[i] = "abcab"[rnd() % 5] + (rnd() % 7 == 0);
	for (uint32_t pos = 1; pos < N; pos++) {
		unsigned char h = buf[pos];
		int n = find(pos, head[h], 24, out);

		head[h] = pos;
		sum += optimum(out, n, pos & 7, (int)(pos % 3 == 0));
		lens[n & 15]++;
	}
	*(volatile uint32_t *)(long)(argc > 9) = sum;	/* dies here */
	return 1;
}
