// SPDX-License-Identifier: MIT
/*
 * regen.c - abstract execution: walk the twin's code from its entry point
 * and, at every point the instrumenter marked, take the decision the
 * witness stream dictates (paper §2.2): at a predicate the next witness
 * names the side taken; instrumented edges consume and check their
 * witness; indirect transfers read their recorded value; returns follow a
 * shadow call stack, which setjmp/longjmp records resynchronise.
 *
 * The stream grows while a task is regenerated (whole-system captures are
 * fed slice by slice): whenever the next byte or the markers at the
 * current position may still come, the regenerator waits (ops->wait).
 *
 * Signals: a SIGNAL marker at stream position P means the handler ran when
 * the thread had written exactly P bytes; it is entered at the first of:
 * reaching the marker's (twin) ip, or needing byte P. Its bytes end at the
 * matching SIGRETURN marker, after the sigreturn syscall of __restore_rt.
 */
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <aetrace/schema.h>

#include "memfn.h"
#include "program.h"

#define MAX_LEVELS 64

/*
 * A thread's value cache (schema.h AE_VC_*), as the traced thread's TLS
 * holds it; shared by the tasks that share that TLS (CLONE_VM without
 * CLONE_SETTLS).
 */
#define VC_VFORKS 16

struct vcache {
	int refs;
	const char *unknown;	/* why only whole values can be decoded */
	/* vfork children still regenerating, innermost last: only that one
	 * may use the cache, the others (its parents) wait */
	const struct ae_regen *vfork[VC_VFORKS];
	int nvfork;
	uint64_t v[AE_VC_SLOTS];
	uint64_t lc[AE_LC_SLOTS];	/* the address cache (AE_VC_BY_ADDR) */
};

/* The last value-cache record of a level: its slot's store may not have
 * run when a signal came (ARCHITECTURE.md item 23). */
struct vclast {
	int valid;
	int low;		/* the store writes the slot's low half only */
	int lc;			/* the address cache's store follows */
	uint32_t slot, lslot;
	uint64_t old, val, lold;
};

struct sj {
	uint64_t sp;
	size_t depth;
	struct ae_df_state ds;		/* registers at setjmp's entry */
	const struct ae_dinsn *call;	/* the call of setjmp */
	uint64_t call_pc;
};

/* A call-stack entry's data state (parallel to the shadow stack). */
struct frame {
	struct ae_df_state ds;		/* before the call */
	const struct ae_dinsn *call;	/* NULL: not a call (signal, sigsetjmp) */
	uint64_t call_pc;
};

/* The value cache after a vfork child's trace ended (its stores are in
 * no replay of its parent): FORK marker index + 1, and the cache. */
struct vfsnap {
	uint64_t mi;
	struct vcache *vc;
};

struct stage {
	/* a copy of the task's bytes and markers from where the replay
	 * enters it on (pinned: a chain copies it whole again) */
	struct ae_tstream s;
	struct vfsnap *vfs;	/* the task's since then */
	int nvfs;
	uint64_t missed;	/* sp_missed of its first markers then */
	uint64_t fork_mi;	/* the FORK marker's index in it */
	uint64_t flags;		/* its clone flags */
	/* the task at that fork */
	uint64_t pos;
	int level;
	size_t n;
	uint64_t *stk;
	struct ae_df_state ds;
	struct vcache *pvc;	/* a copy of its value cache (NULL: none) */
};

/* A child forked inside a handler keeps its replay's copies for a chain
 * while they are no larger than this. */
#define CHAIN_KEEP	(1u << 20)
#define CHAIN_KEEP_TEXT	"1 MiB"

/*
 * A child forked inside a signal handler. Its state at the fork is its
 * parent's, and that includes the handlers it is in, whose interrupted
 * levels the regenerator keeps on its C stack (deliver() and whatever was
 * reading when the signal came). So the child replays its parent's trace
 * from the parent's last checkpoint to the fork, writing no records,
 * then goes on over its own stream with that stack. The replay must
 * reach the fork as the parent did (offset, nesting, call stack,
 * registers, value cache): that is checked. A child that such a child
 * forks before it left the handler replays a chain: the first parent's
 * trace to the first fork, then the second's own from its start to the
 * second (one stage each).
 */
struct replay {
	struct stage *st;
	int nst, cur;		/* the stages, the one being replayed */
	struct ae_regen *start;	/* the state it starts from, at twin start_pc */
	uint64_t start_pc;
	int done;		/* the last fork reached: the child's own from here */
	int inh;		/* levels up to this one are its parent's (their
				 * C frames were built over the parent's stream) */
	int nochain;		/* the stages were let go of (CHAIN_KEEP) */
	int starved;		/* the replay wanted more than a task had read */
	struct vcache *vc;	/* the child's (vc_fork()) */
	/* the child's stream (and where it began), sink and feeder */
	struct ae_tstream *s_child;
	uint64_t own_base, own_mbase;
	const struct ae_regen_sink *sink;
	struct ae_regen_ops ops;
};

struct ae_regen {
	struct ae_program *p;
	struct ae_tstream *s;
	const struct ae_regen_sink *sink;
	struct ae_regen_ops ops;
	struct ae_regen_stats st;
	char name[96];
	uint64_t pos;
	uint64_t mi;		/* next marker (absolute index) */
	uint64_t *stk;
	struct frame *fr;	/* data tracing: parallel to stk */
	size_t n, cap;
	struct sj *sj;
	size_t nsj, capsj;
	int level;
	jmp_buf unwind[MAX_LEVELS];
	size_t level_depth[MAX_LEVELS];
	uint64_t level_ip[MAX_LEVELS];	/* twin ip each handler interrupted */
	/* %rcx each handler's sigreturn must give back (~0: any): where
	 * the regeneration follows it (a data trace's known %rcx, a rep
	 * the handler interrupted: rep_cut, for the next delivery) */
	uint64_t level_cx[MAX_LEVELS];
	/* that handler interrupted an expanded routine past its entry and
	 * was delivered there (xentry): it may not leave by longjmp */
	uint8_t level_xin[MAX_LEVELS];
	/* that handler interrupted an expanded routine (at all): a child
	 * forked in it may not return into it (struct replay) */
	uint8_t level_exp[MAX_LEVELS];
	/* the last handler's SIGRETURN: what it changed in its frame
	 * (TRBUF_CTX_*), and what its producer compared (ret_checked:
	 * TRBUF_MKF_CTX_*) */
	uint64_t ret_changed;
	int ret_checked;
	int rep_cut;
	uint64_t kill_edge;	/* a kill cut the sequence of the edge to it */
	uint64_t kill_skip;	/* 1 + offset a kill last skipped a witness at */
	uint64_t unwind_pc;
	uint64_t loaded_target;	/* from the last AE_VAL_JTLOAD */
	int finishing;		/* in _Exit: stop after its system call */
	int stop;		/* an enum ae_regen_end */
	int debug;		/* AETRACE_DEBUG: narrate signals and longjmps */
	uint64_t sw_taken;	/* switch points taken (or passed) */
	int data;		/* follow data addresses (-fae-data program) */
	struct ae_df_state ds;	/* the registers addresses are made of */
	struct ae_df_state pre;	/* before the current call instruction */
	const struct ae_dinsn *call;	/* the current call instruction */
	uint64_t call_pc;
	const struct ae_dinsn *sys;	/* the last system call (fork, clone) */
	uint64_t sys_pc;
	int child_records;	/* a new child: read sys's records first */
	int args_at_call;	/* the last call entered a routine to expand past
				 * its argument records (AE_EV_ARGS_AT_CALL) */
	int expanding;		/* inside expand(): a signal's %rsp is the
				 * routine's, not the one ds holds */
	uint64_t xentry;	/* expand(): the routine whose entry's signals
				 * consume() delivers (its twin entry), or 0 */
	uint64_t mk_keep;	/* markers from this index on are still read
				 * (expand(): those taken by the handlers of
				 * signals at its entry); UINT64_MAX: none */
	struct ae_rec rec[AE_REC_BATCH];	/* records not yet in the sink */
	unsigned int nrec;
	int sink_stop;		/* the sink asked to stop */
	struct vcache *vc;	/* the thread's value cache (NULL: all zero) */
	struct vclast vcl;
	uint64_t ld_addr;	/* the last instruction's first access */
	struct {
		/* the visit the last signal delivered at its ip interrupted:
		 * reaching that ip again with the same %rsp before a byte
		 * is read would have fitted the marker as well */
		uint64_t ip, sp, pos, mpos, index, mi;
		int active, left;
	} vw;
	/* the same for the last switch point taken at its ip: a second
	 * visit would have fitted it too, so it is counted as not placed */
	struct {
		uint64_t ip, sp, pos, mi;
		int active, left;
	} sww;
	uint8_t vsib[128];	/* the last gather's AE_VAL_VSIB record */
	/* a marker placed amid an expanded routine: another call at the
	 * offset its handler left (no byte read since) that fits it too
	 * makes it ambiguous (as vw does for instructions); xw a SIGNAL's,
	 * xsw a switch point's (while no marker after it is taken: mi) */
	struct {
		struct ae_smk k;
		uint64_t pos, mi;
		int active;
	} xw, xsw;
	int in_emu;		/* inside an emulation's hook: no expansion */
	/* whole-capture regeneration (ops.fork): a copy of the state at the
	 * last checkpoint, a run_loop() iteration at level 0 at twin ck_pc,
	 * which a child forked inside a handler replays from (ck_missed:
	 * the sp_missed of the markers at its offset then) */
	struct ae_regen *ck;
	uint64_t ck_pc, ck_missed;
	uint64_t ck_bytes;	/* their distance (AETRACE_CHECKPOINT_BYTES) */
	int ck_vfork;		/* one after the vfork child's trace ends: its
				 * changes to the shared cache are in no replay */
	struct replay *rp;	/* this child replays its parent first */
	/* (with checkpoints) the caches after vfork children's traces
	 * ended, since the last checkpoint; vf_mi: a vfork FORK (index + 1)
	 * whose child's stores the next use of the cache comes after */
	struct vfsnap *vfs;
	int nvfs;
	uint64_t vf_mi;
	uint32_t sgen;		/* streams switched (a replay's forks) */
};

/* What one instruction's records said. */
struct insn_vals {
	uint64_t repcnt, target, jtidx, ljsp;
	const uint8_t *vsib;	/* a gather's AE_VAL_VSIB record (in g) */
	const struct ae_rev *expand;	/* entry of a routine to expand */
	uint64_t emitted;	/* iterations of this rep emitted so far */
	uint8_t have_rep, have_target, have_jt, have_lj, loaded;
	uint8_t args_at_call;	/* this call enters one past its argument
				 * records: the routine's AE_MEMFN_* id */
	uint8_t fall_read;	/* a repe/repne's fall-through witness: read */
};
/* (zeroed for every instruction: small enough for vector stores, not a
 * rep stos, a tenth of regeneration's time at 88 bytes) */
_Static_assert(sizeof(struct insn_vals) <= 64, "insn_vals grew");

static int rerr(struct ae_regen *g, uint64_t pc, const char *msg)
{
	fprintf(stderr, "aetrace: %s%s at trace offset %llu, instruction %#llx (%llu instructions regenerated)\n",
		g->name, msg, (unsigned long long)g->pos, (unsigned long long)pc,
		(unsigned long long)g->st.insns);
	return -1;
}

/* Hands the task's records to the sink. Returns 0, or -1 once the sink
 * asked to stop (the records after that are dropped). */
static int sink_flush(struct ae_regen *g)
{
	unsigned int n = g->nrec;

	g->nrec = 0;
	if (n && !g->sink_stop && g->sink->recs(g->sink->ctx, g->rec, n))
		g->sink_stop = 1;
	return g->sink_stop ? -1 : 0;
}

/* One record (g->sink->recs is set). Returns 0, or -1 to stop: the
 * sink refused this batch or an earlier one (handed over at a wait). */
static inline int put_rec(struct ae_regen *g, uint32_t acc, uint64_t addr, uint32_t size)
{
	struct ae_rec *r;

	if ((g->nrec == AE_REC_BATCH || g->sink_stop) && sink_flush(g)) {
		g->stop = AE_END_STOPPED;
		return -1;
	}
	r = &g->rec[g->nrec++];
	r->addr = addr;
	r->size = size;
	r->acc = acc;
	return 0;
}

static int want_mem(const struct ae_regen *g)
{
	return g->sink->recs && g->sink->mem;
}

/* Other tasks run while this one waits: its records go first. */
static void ops_wait(struct ae_regen *g)
{
	sink_flush(g);
	g->ops.wait(g->ops.ctx);
}

/* Push return address a; call: the call instruction (data tracing). */
static int push(struct ae_regen *g, uint64_t a, int call)
{
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 1024;
		uint64_t *n = realloc(g->stk, cap * sizeof(*n));
		struct frame *f;

		if (!n)
			return rerr(g, a, "out of memory");
		g->stk = n;
		f = realloc(g->fr, cap * sizeof(*f));
		if (!f)
			return rerr(g, a, "out of memory");
		g->fr = f;
		g->cap = cap;
	}
	g->fr[g->n].ds = call ? g->pre : g->ds;
	g->fr[g->n].call = call ? g->call : NULL;
	g->fr[g->n].call_pc = g->call_pc;
	g->stk[g->n++] = a;
	return 0;
}

/* A plain value record of `width` bytes was read. */
static void count_plain(struct ae_regen *g, unsigned int width)
{
	g->st.value_bytes += width;
	g->st.value_recs[width <= 8 ? width : 0]++;
}

/* The value-cache profile's counts of record e's place, or NULL when
 * none are kept (no --vc-profile; a record not in the schema's table). */
static struct ae_vcprof_count *prof_of(const struct ae_regen *g, const struct ae_rev *e)
{
	return g->p->vcprof && (!g->rp || g->rp->done) && e >= g->p->ev && e < g->p->ev + g->p->nev ?
	       &g->p->vcprof[e - g->p->ev] : NULL;
}

/* The value-cache profile's counts of a plain register record e of 4 or 8
 * bytes in an object built with the cache (a place it could not code, or
 * that a profile made plain: it stays so when the profile of such a build
 * is used again; one built without it says nothing of the cache). */
static void prof_plain(struct ae_regen *g, const struct ae_rev *e)
{
	struct ae_vcprof_count *cnt = prof_of(g, e);

	if (cnt && e->vcobj && (e->flag == AE_VAL_REG || e->flag == AE_VAL_REG_SEXT) &&
	    (e->width == 4 || e->width == 8)) {
		cnt->recs++;
		cnt->bytes += e->width;
	}
}

static const char *const df_names[18] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
	"the %fs base", "the direction flag",
};

/* Data records written after instruction d at pc (at its return point,
 * for a call). Returns 0 or -1. */
static int consume(struct ae_regen *g, unsigned int width, uint64_t *v, uint64_t pc);
static int vc_value(struct ae_regen *g, const struct ae_rev *e, uint64_t pc, uint64_t *v, int t0);
static int data_after(struct ae_regen *g, const struct ae_dinsn *d, uint64_t pc)
{
	for (int i = 0; d && i < d->nev; i++) {
		const struct ae_rev *e = &d->ev[i];
		uint64_t v, at = g->pos;
		int vcr = e->flag == AE_VAL_REG_VC || e->flag == AE_VAL_REG_VC_SEXT ||
			  e->flag == AE_VAL_REG_VC_LOW;

		if (e->kind != AE_EV_VAL_AFTER ||
		    (e->flag != AE_VAL_REG && e->flag != AE_VAL_REG_SEXT && !vcr))
			continue;
		if (e->a > 15)
			return rerr(g, pc, "register record names no register");
		if (vcr) {
			if (vc_value(g, e, pc, &v, -1))
				return -1;
		} else {
			if (consume(g, e->width, &v, pc))
				return -1;
			count_plain(g, e->width);
			prof_plain(g, e);
		}
		if (e->flag == AE_VAL_REG_SEXT && e->width < 8 && (v >> (8 * e->width - 1)) & 1)
			v |= ~0ull << (8 * e->width);
		if (g->debug)
			fprintf(stderr, "aetrace: %sreg %s = %#llx at offset %llu after %#llx, %llu bytes%s\n",
				g->name, df_names[e->a], (unsigned long long)v, (unsigned long long)at,
				(unsigned long long)pc, (unsigned long long)(g->pos - at),
				!vcr ? "" : e->flag == AE_VAL_REG_VC_LOW ? " (value cache, low half)" :
				e->b & AE_VC_BY_ADDR ? " (value cache, by address)" : " (value cache)");
		if (g->data)
			ae_df_set(&g->ds, e->a, v, 8);
	}
	return 0;
}

/* Return through frame f: the ABI keeps the callee-saved registers, the
 * caller's records follow the call. Returns 0 or -1. */
static int data_return(struct ae_regen *g, const struct frame *f, uint64_t pc)
{
	const uint32_t sp = 1u << AE_DF_RSP;
	struct ae_dinsn *d;
	const struct ae_df_op *op;
	uint64_t want;

	if (!f->call)
		return 0;
	/* a `ret $n` pops n bytes more than its call pushed */
	d = ae_decode(g->p, pc);
	op = d ? ae_decode_df(g->p, d, pc) : NULL;
	want = f->ds.v[AE_DF_RSP] + (op ? op->retimm : 0);
	if ((g->ds.known & sp) && (f->ds.known & sp) && g->ds.v[AE_DF_RSP] != want)
		return rerr(g, pc, "stack pointer at a return differs from its call's");
	for (int r = 0; r < 16; r++)
		if ((AE_DF_CALLEE_SAVED >> r) & 1)
			g->ds.v[r] = f->ds.v[r];
	g->ds.v[AE_DF_RSP] = want;
	g->ds.known = (g->ds.known & ~AE_DF_CALLEE_SAVED) | (f->ds.known & AE_DF_CALLEE_SAVED);
	g->ds.fs = f->ds.fs;
	g->ds.fs_known = f->ds.fs_known;
	g->ds.df = 0;		/* the ABI: clear at every return */
	g->ds.df_known = 1;
	g->ds.known &= ~(AE_DF_K_FLAGS | AE_DF_K_CARRY);	/* nor keep the flags */
	return data_after(g, f->call, f->call_pc);
}

/* The accesses of one execution (one iteration) of d at pc, to the sink,
 * and their effect on the registers. Returns 0 or -1. */
static int data_exec(struct ae_regen *g, struct ae_dinsn *d, uint64_t pc, const uint8_t *vsib)
{
	const struct ae_df_op *op = ae_decode_df(g->p, d, pc);
	struct ae_df_access a[AE_DF_VSIB_MAX];
	int miss = 0, n;

	if (!op || op->unfollowed)
		return rerr(g, pc, "data tracing cannot follow this instruction (" AE_DF_UNFOLLOWED_KINDS ")");
	if (ae_df_vsib_bytes(op) && !vsib)
		return rerr(g, pc, "a gather without its index record (not built with -fae-data?)");
	if (ae_df_vsib_bytes(op))
		n = ae_df_vsib_accesses(op, pc, &g->ds, vsib, g->sink->vex, a, &miss);
	else
		n = ae_df_accesses(op, pc, &g->ds, a, &miss);
	if (n < 0) {
		char msg[200];

		snprintf(msg, sizeof(msg), "an address needs %s, which the trace does not give (%s)",
			 df_names[miss < 0 || miss > 17 ? 17 : miss],
			 miss == 17 ? "a popfq in this function set it from the stack: not followed" :
			 "not built with -fae-data?");
		return rerr(g, pc, msg);
	}
	g->ld_addr = n > 0 ? a[0].addr : 0;
	if (op->kind == AE_DF_BTREG && !g->sink->vex)
		n = 0;		/* VEX's phantom stack records: no real access */
	for (int i = 0; want_mem(g) && i < n; i++)
		if (put_rec(g, a[i].acc, a[i].addr, a[i].size))
			return -1;
	ae_df_step(op, pc, &g->ds);
	return 0;
}

/* Marker with absolute index i, or NULL if not (yet) known. */
static struct ae_smk *mk(struct ae_regen *g, uint64_t i)
{
	struct ae_tstream *s = g->s;

	if (i < s->mk_base || i >= s->mk_base + s->nmk)
		return NULL;
	return &s->mk[i - s->mk_base];
}

static uint64_t mk_ip(struct ae_regen *g, struct ae_smk *k)
{
	if (!k->ip_done) {
		uint32_t t = k->m.type;

		if (t == TRBUF_MK_SIGNAL || t == TRBUF_MK_SIGRETURN || t == TRBUF_MK_EXIT ||
		    t == TRBUF_MK_EXEC || t == TRBUF_MK_FORK || t == TRBUF_MK_SWITCH_IN) {
			struct ae_resume r;

			k->ip = ae_map_resume_seq(g->p, k->m.ip, &r);
			k->via_seq = r.via_seq;
			k->sp_known = r.sp_known && k->m.sp;
			k->sp = k->m.sp + r.sp_adj;
		}
		k->ip_done = 1;
	}
	return k->ip;
}

static int is_active(const struct ae_smk *k)
{
	uint32_t t = k->m.type;

	return t == TRBUF_MK_SIGNAL || t == TRBUF_MK_SIGRETURN || t == TRBUF_MK_EXIT ||
	       t == TRBUF_MK_EXEC || t == TRBUF_MK_FORK || (t == TRBUF_MK_SWITCH_IN && !k->moot);
}

/*
 * A switch point: the SWITCH_IN marker the task resumed at, which its
 * feeder places where the task's bytes of the slice before end. Markers
 * that come after it in the stream came after it in time, so at its
 * offset nothing waits for them until it is taken.
 */
static int is_switch(const struct ae_smk *k)
{
	return k->m.type == TRBUF_MK_SWITCH_IN;
}

static const char *mk_name(const struct ae_smk *k)
{
	return k->m.type == TRBUF_MK_SIGNAL ? "SIGNAL" : is_switch(k) ? "SWITCH_IN" : "EXIT";
}

/* Are switch points in the stream that the regenerator has not taken? */
static inline int switches_left(const struct ae_regen *g)
{
	return g->s->nswitch != g->sw_taken + g->s->nmoot;
}

/* Take the pending switch point: the task was switched out here. */
static void take_switch(struct ae_regen *g, int placed)
{
	struct ae_smk *k = mk(g, g->mi);
	uint64_t index = k->index;

	k->taken = 1;
	/* (no marker that came later: a signal's watch goes on) */
	if (g->vw.mi == g->mi)
		g->vw.mi++;
	g->mi++;
	g->st.switches++;
	g->sw_taken++;
	g->st.switches_unplaced += !placed;
	g->st.switches_no_ip += !placed && !mk_ip(g, k);
	if (g->debug)
		fprintf(stderr, "aetrace: %sswitch point (marker %llu) at offset %llu, ip %#llx%s\n",
			g->name, (unsigned long long)index, (unsigned long long)g->pos,
			(unsigned long long)k->m.ip, placed ? "" : ", not at its ip");
	if (g->ops.switched) {
		sink_flush(g);
		g->ops.switched(g->ops.ctx, index, placed);
	}
}

static inline void wait_markers_here(struct ae_regen *g);

/* Take the switch point at this offset; then markers that came after it
 * at this offset are waited for, as anywhere (at_insn() waited for none
 * while it was pending). */
static void switch_here(struct ae_regen *g, int placed)
{
	take_switch(g, placed);
	wait_markers_here(g);
}

/* Wait for more of the stream; -1 if it is complete. */
static int wait_more(struct ae_regen *g)
{
	if (g->s->final || !g->ops.wait)
		return -1;
	ops_wait(g);
	return 0;
}

/*
 * Wait for a vfork child's trace to end: while the stream grows, as for
 * bytes; once it is final (a parent regenerated after its own trace was
 * all read) while the other tasks run. 0, or -1 when the child's trace
 * will not end.
 */
static int wait_vfork(struct ae_regen *g)
{
	if (!g->s->final)
		return wait_more(g);
	if (!g->ops.wait_others)
		return -1;
	sink_flush(g);
	return g->ops.wait_others(g->ops.ctx);
}

/* The next active marker (skipping ones that carry no control flow, and
 * taking switch points passed already: no instruction matched them). */
static struct ae_smk *next_mk(struct ae_regen *g)
{
	struct ae_smk *k;

	while ((k = mk(g, g->mi))) {
		if (!is_active(k))
			g->mi++;
		else if (is_switch(k) && k->pos < g->pos)
			take_switch(g, 0);
		else
			break;
	}
	return k;
}

static int run(struct ae_regen *g, uint64_t pc);

/*
 * The task left its code at ip (`what`: a signal came, or it died)
 * between a value-cache record's commit and its slots' stores: the slots
 * hold their old values until the stores run, if ever (a vfork child's
 * parent goes on with them). Returns the store's slot (AE_VC_SLOTS: the
 * address cache's, after the value slot's), -1 when ip is no such store,
 * -2 after an error (no record before it explains it).
 */
static int vc_unstore(struct ae_regen *g, uint64_t ip, const char *what)
{
	int vslot = ae_vc_update_at(g->p, ip);

	if (vslot < 0)
		return -1;
	if (!g->vcl.valid || !g->vc ||
	    (vslot == AE_VC_SLOTS ? !g->vcl.lc : g->vcl.slot != (uint32_t)vslot)) {
		char msg[128];

		snprintf(msg, sizeof(msg), "%s at a value-cache store that no record before it explains",
			 what);
		rerr(g, ip, msg);
		return -2;
	}
	if (vslot < AE_VC_SLOTS)
		g->vc->v[vslot] = g->vcl.old;
	if (g->vcl.lc)
		g->vc->lc[g->vcl.lslot] = g->vcl.lold;
	if (g->debug && vslot < AE_VC_SLOTS)
		fprintf(stderr, "aetrace: %s%s came before the store into value-cache slot %d\n",
			g->name, what, vslot);
	if (g->debug && g->vcl.lc)
		fprintf(stderr, "aetrace: %s%s came before the store into address-cache slot %u\n",
			g->name, what, g->vcl.lslot);
	return vslot;
}

/*
 * The handler that returned to ip changed registers in its frame
 * (g->ret_changed): an error when the regeneration follows one of them:
 * a known register, a callee-saved one a return restores from a call's
 * state (the callee may have restored it already), a known status flag,
 * in a data trace the direction flag and the vector registers (a gather's
 * index), any register of an expanded routine (expanding). Returns 0, or
 * -1 after the error.
 */
static int ctx_changed(struct ae_regen *g, int expanding, uint64_t ip)
{
	uint64_t c = g->ret_changed, follow = g->ds.known & 0xffff;
	char msg[256], *p = msg, *end = msg + sizeof(msg);

	for (size_t i = 0; i < g->n; i++)
		if (g->fr[i].call)
			follow |= g->fr[i].ds.known & AE_DF_CALLEE_SAVED;
	if (expanding)
		follow = 0xffff;
	if (g->ds.known & (AE_DF_K_FLAGS | AE_DF_K_CARRY))
		follow |= TRBUF_CTX_STATUS;
	if (g->data)
		follow |= TRBUF_CTX_DF | TRBUF_CTX_VECTOR;
	g->ret_changed = 0;
	if (!(c & follow))
		return 0;
	c &= follow;
	p += snprintf(p, end - p, "signal handler changed");
	for (int r = 0, n = 0; r < 19; r++) {
		if (!(c >> r & 1))
			continue;
		c &= ~(1ull << r);
		p += snprintf(p, end - p, "%s%s%s", !n++ ? " " : c ? ", " : " and ",
			      r < 16 ? "%" : "", r < 16 ? df_names[r] :
			      r == 16 ? "the status flags" : r == 17 ? "the direction flag" :
			      "the vector or x87 registers");
	}
	snprintf(p, end - p, " in its ucontext, which the regeneration follows%s: not supported",
		 expanding ? " (it interrupted an expanded library routine)" : "");
	return rerr(g, ip, msg);
}

/* Enter the handler of the pending SIGNAL marker; returns after its
 * sigreturn. */
static int deliver(struct ae_regen *g)
{
	struct ae_smk *k = mk(g, g->mi);
	const struct trbuf_marker *m = &k->m;
	uint64_t handler = ae_map_resume(g->p, m->arg);
	size_t depth = g->n;
	uint64_t loaded = g->loaded_target;
	int args_at_call = g->args_at_call;
	struct ae_df_state saved_ds;
	struct vclast vcl;
	uint64_t ld_addr, sig_ip, sig_sp, xentry;
	uint8_t vsib[sizeof(g->vsib)];
	int ret, vslot, expanding;

	if (!handler) {
		char msg[160];

		snprintf(msg, sizeof(msg), "SIGNAL marker %llu: handler %#llx is not instrumented code%s",
			 (unsigned long long)k->index, (unsigned long long)m->arg,
			 m->arg < 128 ? " (the marker carries a signal number, not the handler's address)" : "");
		return rerr(g, m->ip, msg);
	}
	if (!g->p->restorer)
		return rerr(g, m->arg, "the twin has no __restore_rt");
	if (g->level + 1 >= MAX_LEVELS)
		return rerr(g, handler, "signal handlers nested too deeply");
	/* the marker says where %rsp was: an instruction trace follows it
	 * from here on. Where %rsp is known it must agree (a signal in a
	 * witness stub is delivered past at_insn()'s check: one wrong
	 * marker must not move %rsp for all that come after it). Not in
	 * an expansion: the routine's body may have moved %rsp, which the
	 * emulation keeps. */
	if (mk_ip(g, k) && k->sp_known && !g->expanding) {
		if ((g->ds.known & (1u << AE_DF_RSP)) && g->ds.v[AE_DF_RSP] != k->sp) {
			char msg[192];

			snprintf(msg, sizeof(msg),
				 "SIGNAL marker %llu: its %%rsp %#llx is not the %#llx the instructions before it left",
				 (unsigned long long)k->index, (unsigned long long)k->sp,
				 (unsigned long long)g->ds.v[AE_DF_RSP]);
			return rerr(g, m->ip, msg);
		}
		if (!g->data)
			ae_df_set(&g->ds, AE_DF_RSP, k->sp, 8);
	}
	vslot = vc_unstore(g, m->ip, "a signal");
	if (vslot == -2)
		return -1;
	if (vslot >= 0) {
		if (g->vcl.lc) {
			if (vslot < AE_VC_SLOTS)
				g->st.lc_signals++;
			else
				g->st.lcw_signals++;
		}
		g->st.vc_signals++;
	}
	ld_addr = g->ld_addr;
	vcl = g->vcl;
	g->vcl.valid = 0;
	/* the interrupted gather's record, if any: the handler's own
	 * gathers must not take its place */
	memcpy(vsib, g->vsib, sizeof(vsib));
	sig_ip = m->ip;
	sig_sp = m->sp;
	g->level_ip[g->level + 1] = mk_ip(g, k);
	g->level_cx[g->level + 1] = g->rep_cut || (g->data && (g->ds.known & (1u << 1))) ?
				    m->cx : ~0ull;
	g->level_xin[g->level + 1] = g->xentry && mk_ip(g, k) != g->xentry;
	g->level_exp[g->level + 1] = g->expanding || g->in_emu || g->xentry;
	g->rep_cut = 0;
	g->mi++;
	g->st.signals++;
	if (g->debug)
		fprintf(stderr, "aetrace: %ssignal %u (marker %llu) at offset %llu, ip %#llx%s: handler %#llx, depth %zu\n",
			g->name, m->arg2, (unsigned long long)k->index, (unsigned long long)g->pos,
			(unsigned long long)m->ip, k->via_seq ? " in a sequence" : "",
			(unsigned long long)handler, depth);
	if (push(g, g->p->restorer, 0))
		return -1;
	/* the handler's registers come from records: its %rsp is the
	 * kernel's choice (the marker has the interrupted one) */
	saved_ds = g->ds;
	g->args_at_call = 0;
	g->ds.known = 0;
	g->ds.df = 0;
	g->ds.df_known = 1;
	g->level++;
	g->level_depth[g->level] = depth;
	expanding = g->expanding;
	g->expanding = 0;
	xentry = g->xentry;
	g->xentry = 0;
	/* switched out while the kernel delivered it (its hook waits for
	 * room): the task's ip was still the interrupted one, the handler's
	 * first instruction is where it resumes */
	while ((k = next_mk(g)) && is_switch(k) && k->pos == g->pos && k->m.ip == sig_ip &&
	       k->m.sp == sig_sp)
		switch_here(g, 1);
	ret = run(g, handler);
	g->expanding = expanding;
	g->xentry = xentry;
	g->level--;
	if (ret < 0 || g->stop)
		return ret;
	g->n = depth;
	g->loaded_target = loaded;
	g->args_at_call = args_at_call;
	g->ds = saved_ds;
	if (!g->ret_checked)
		g->st.sigreturns_unchecked++;
	else if (!(g->ret_checked & (TRBUF_MKF_CTX_FULL | TRBUF_MKF_CTX_FLAGS)))
		g->st.sigreturns_gprs_only++;
	else if (!(g->ret_checked & TRBUF_MKF_CTX_FULL))
		g->st.sigreturns_no_vector++;
	if (ctx_changed(g, expanding, sig_ip))
		return -1;
	g->ld_addr = ld_addr;
	g->vcl = vcl;
	memcpy(g->vsib, vsib, sizeof(vsib));
	if (vslot >= 0 && vslot < AE_VC_SLOTS) {
		/* the stores run when the handler returns; another signal
		 * before them would find what this handler left */
		g->vcl.old = g->vc->v[vslot];
		g->vc->v[vslot] = vcl.low ? (g->vcl.old & ~0xffffffffull) | (vcl.val & 0xffffffffull) :
					    vcl.val;
	}
	if (vslot >= 0 && vcl.lc) {
		g->vcl.lold = g->vc->lc[vcl.lslot];
		g->vc->lc[vcl.lslot] = vcl.val;
	}
	return 0;
}

static int pending_signal_here(struct ae_regen *g)
{
	struct ae_smk *k = next_mk(g);

	return k && k->m.type == TRBUF_MK_SIGNAL && k->pos == g->pos;
}

static int killed_before(struct ae_regen *g, uint64_t next);

/*
 * The task ends at marker k (an EXIT not in a system call, an EXEC):
 * killed before its record's stores, a cache it shares (a vfork
 * child's) keeps the old values. Returns -1 (g->stop set, or after an
 * error).
 */
static int end_at(struct ae_regen *g, const struct ae_smk *k)
{
	if (k->m.type == TRBUF_MK_EXIT && vc_unstore(g, k->m.ip, "the task's end") == -2)
		return -1;
	g->stop = k->m.type == TRBUF_MK_EXIT ? AE_END_EXIT : AE_END_EXEC;
	g->mi++;
	return -1;
}

/*
 * The bytes instruction pc writes before or after it end here: was the
 * task killed amid them (a kill at this offset whose ip resumes at pc,
 * or after it)? Then it ends here. Returns 1 (g->stop set, or after an
 * error), 0.
 */
static int killed_amid(struct ae_regen *g, uint64_t pc)
{
	struct ae_dinsn *d = ae_decode(g->p, pc);

	if (!killed_before(g, pc) && (!d || !killed_before(g, pc + d->len)))
		return 0;
	end_at(g, next_mk(g));
	return 1;
}

static int consume_bytes(struct ae_regen *g, unsigned int width, void *buf, uint64_t pc);
static int consume(struct ae_regen *g, unsigned int width, uint64_t *v, uint64_t pc)
{
	*v = 0;
	return consume_bytes(g, width, v, pc);
}

/* The next width bytes of the trace into buf, after the signals and
 * switch points due before them. Returns 0 or -1. */
static int consume_bytes(struct ae_regen *g, unsigned int width, void *buf, uint64_t pc)
{
	for (;;) {
		struct ae_smk *w;

		/* (in a sequence cut at the switch: its ip; after a handler
		 * delivered here, the next may be a switch point again) */
		while ((w = next_mk(g)) && w->pos == g->pos && is_switch(w))
			switch_here(g, mk_ip(g, w) && w->via_seq);
		if (pending_signal_here(g)) {
			struct ae_smk *k = next_mk(g);

			if (k->sp_missed && !k->via_seq) {
				char msg[160];

				snprintf(msg, sizeof(msg),
					 "SIGNAL marker %llu: its ip was reached at offset %llu, never with its %%rsp %#llx",
					 (unsigned long long)k->index, (unsigned long long)k->pos,
					 (unsigned long long)k->sp);
				return rerr(g, k->ip, msg);
			}
			if (deliver(g) || g->stop)
				return -1;
			continue;
		}
		if (g->pos + width <= g->s->end)
			break;
		if (wait_more(g)) {
			if (g->s->final == 2)
				g->stop = AE_END_CAPTURE;
			else if (!killed_amid(g, pc))
				rerr(g, pc, "trace ends before the program's recorded end (truncated?)");
			return -1;
		}
	}
	memcpy(buf, g->s->buf + (g->pos - g->s->base), width);
	g->pos += width;
	return 0;
}

static struct vcache *vc_get(struct ae_regen *g)
{
	if (!g->vc) {
		g->vc = calloc(1, sizeof(*g->vc));
		if (g->vc)
			g->vc->refs = 1;
	}
	return g->vc;
}

/* A vfork child's trace is done (how: its end state, 0 if it failed):
 * its parent may go on with the cache it shares, unless the child's
 * stores were not all seen. */
static void vc_vfork_release(struct vcache *vc, const struct ae_regen *g, int end)
{
	for (int i = 0; vc && i < vc->nvfork; i++)
		if (vc->vfork[i] == g) {
			memmove(&vc->vfork[i], &vc->vfork[i + 1],
				(vc->nvfork - i - 1) * sizeof(vc->vfork[0]));
			vc->nvfork--;
			if (end != AE_END_EXIT && end != AE_END_EXEC && !vc->unknown)
				vc->unknown = "its vfork child's trace did not reach its exit or exec";
			return;
		}
}

static void vc_vfork_done(struct ae_regen *g, int end)
{
	vc_vfork_release(g->vc, g, end);
}

/* Let go of cache vc that g held (and, a vfork child, used). */
static void vc_unref(struct vcache *vc, const struct ae_regen *g)
{
	if (!vc)
		return;
	vc_vfork_release(vc, g, 0);
	if (!--vc->refs)
		free(vc);
}

static void vc_put(struct ae_regen *g)
{
	struct vcache *vc = g->vc;

	g->vc = NULL;
	vc_unref(vc, g);
}

/* A private copy of cache vc, or NULL (none, or no memory: *err set). */
static struct vcache *vc_copy(const struct vcache *vc, int *err)
{
	struct vcache *c;

	if (!vc)
		return NULL;
	c = malloc(sizeof(*c));
	if (!c) {
		*err = 1;
		return NULL;
	}
	*c = *vc;
	c->refs = 1;
	c->nvfork = 0;
	return c;
}

/*
 * The first use of the cache after a vfork child's FORK (g->vf_mi), its
 * trace ended: a task that keeps checkpoints keeps the cache as the child
 * left it, for the replays that pass that FORK; a replay takes it (its
 * cache is its own copy, which the child's stores never reached).
 * Returns 0, or -1 (no memory).
 */
static int vf_done(struct ae_regen *g, struct vcache *vc)
{
	struct vfsnap *n;
	int err = 0;

	if (g->rp && !g->rp->done) {
		const struct stage *st = &g->rp->st[g->rp->cur];

		for (int i = 0; i < st->nvfs; i++)
			if (st->vfs[i].mi == g->vf_mi) {
				memcpy(vc->v, st->vfs[i].vc->v, sizeof(vc->v));
				memcpy(vc->lc, st->vfs[i].vc->lc, sizeof(vc->lc));
				vc->unknown = st->vfs[i].vc->unknown;
				break;
			}
	} else if (g->ops.fork) {
		n = realloc(g->vfs, (g->nvfs + 1) * sizeof(*n));
		if (!n)
			return -1;
		g->vfs = n;
		n[g->nvfs].mi = g->vf_mi;
		n[g->nvfs].vc = vc_copy(vc, &err);
		if (err)
			return -1;
		g->nvfs++;
	}
	g->vf_mi = 0;
	return 0;
}

/* Is cache vc still to be changed by a vfork child of g's? */
static int vc_pending(const struct vcache *vc, const struct ae_regen *g)
{
	return vc->nvfork && vc->vfork[vc->nvfork - 1] != g;
}

/*
 * Before a FORK: wait for a vfork child's trace to end (if it never does,
 * a copy made then says its cache is unknown, vc_fork()), and keep the
 * cache as it left it. Returns 0, or -1 (no memory).
 */
static int vc_settle(struct ae_regen *g)
{
	while (vc_pending(g->vc, g) && !wait_vfork(g))
		;
	return g->vf_mi && !vc_pending(g->vc, g) ? vf_done(g, g->vc) : 0;
}

static void vfs_free(struct vfsnap *v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i].vc);
	free(v);
}

/* A copy of n snapshots v into *to. Returns 0 or -1. */
static int vfs_copy(struct vfsnap **to, int *nto, const struct vfsnap *v, int n)
{
	int err = 0;

	*to = NULL;
	*nto = 0;
	if (!n)
		return 0;
	*to = calloc(n, sizeof(**to));
	if (!*to)
		return -1;
	for (int i = 0; i < n; i++) {
		(*to)[i].mi = v[i].mi;
		(*to)[i].vc = vc_copy(v[i].vc, &err);
		*nto = i + 1;
		if (err)
			return -1;
	}
	return 0;
}

/* The cache a record reads or sets: not while a vfork child may still
 * change it, and for a record coded against it (`coded`), not one tasks
 * running at once left unknown. NULL after an error. */
static struct vcache *vc_for(struct ae_regen *g, uint64_t pc, int coded)
{
	struct vcache *vc = vc_get(g);

	if (!vc) {
		rerr(g, pc, "out of memory");
		return NULL;
	}
	while (vc_pending(vc, g))
		if (wait_vfork(g)) {
			rerr(g, pc, "used the value cache it shares with its vfork child before that child's trace ended");
			return NULL;
		}
	if (g->vf_mi && vf_done(g, vc)) {
		rerr(g, pc, "out of memory");
		return NULL;
	}
	if (coded && vc->unknown) {
		char msg[200];

		snprintf(msg, sizeof(msg), "a value coded against a value cache that is unknown (%s)",
			 vc->unknown);
		rerr(g, pc, msg);
		return NULL;
	}
	return vc;
}

/*
 * The value-cache profile's counts of one place: the bytes its record
 * took (nb), and what each test would have found for value v, the value
 * slot holding old and, at an address-cache place, the address slot lc
 * (both as they were before the record), whichever test ran first, so
 * that profiles of builds in either order agree. No tests when the cache
 * is unknown (a full value of a task sharing it).
 */
static void vc_count(struct ae_vcprof_count *c, int by_addr, int low, uint64_t v, uint64_t old,
		     uint64_t lc, int known, unsigned int nb)
{
	int64_t d = low ? (int64_t)(int32_t)(uint32_t)(v - old) : (int64_t)(v - old);

	c->recs++;
	c->bytes += nb;
	if (!known)
		return;
	if (by_addr && lc == v)
		c->lc_hits++;
	if (d >= -64 && d < 64)
		c->one_byte++;
}

/* A register's value record coded against slot e->b of the thread's
 * value cache (AE_VAL_REG_VC, _SEXT, _LOW) or, with AE_VC_BY_ADDR, the
 * address cache's slot of the load just regenerated; updates them. The
 * first byte is read here, or is t0 (0..255) when a group's was. Returns
 * 0 or -1. */
static int vc_value(struct ae_regen *g, const struct ae_rev *e, uint64_t pc, uint64_t *v, int t0)
{
	int by_addr = !!(e->b & AE_VC_BY_ADDR);
	uint32_t slot = AE_VC_SLOT_OF(e->b), lslot = ae_lc_slot(g->ld_addr);
	struct vcache *vc;
	struct ae_vcprof_count *cnt;
	uint64_t t = (uint64_t)t0, hi, old;
	int64_t d = 0;
	unsigned int nb = 1;

	if (t0 < 0 && consume(g, 1, &t, pc))
		return -1;
	if (t == AE_VC_FULL) {
		if (consume(g, e->width, v, pc))
			return -1;
		nb = 1 + e->width;
		if (e->flag == AE_VAL_REG_VC_SEXT && (*v >> 31) & 1)
			*v |= ~0ull << 32;
	} else if (t == AE_VC_BY_ADDR_HIT && by_addr) {
		/* below */
	} else if ((t & 7) == 3) {
		if (consume(g, 2, &hi, pc))
			return -1;
		d = (int32_t)(uint32_t)((t | hi << 8) << 8) >> 11;
		nb = 3;
	} else if ((t & 3) == 1) {
		if (consume(g, 1, &hi, pc))
			return -1;
		d = (int16_t)(t | hi << 8) >> 2;
		nb = 2;
	} else if (!(t & 1)) {
		d = (int8_t)t >> 1;
	} else {
		char msg[96];

		g->pos--;
		snprintf(msg, sizeof(msg), "corrupt trace: value-cache record tag %#llx",
			 (unsigned long long)t);
		return rerr(g, pc, msg);
	}
	vc = vc_for(g, pc, t != AE_VC_FULL);
	if (!vc)
		return -1;
	old = vc->v[slot];
	if (t != AE_VC_FULL)
		*v = t == AE_VC_BY_ADDR_HIT && by_addr ? vc->lc[lslot] : old + d;
	if (e->flag == AE_VAL_REG_VC_LOW) {
		/* low halves: the slot's upper half stays */
		*v &= 0xffffffffull;
		vc->v[slot] = (old & ~0xffffffffull) | *v;
	} else {
		vc->v[slot] = *v;
	}
	g->vcl = (struct vclast){ .valid = 1, .low = e->flag == AE_VAL_REG_VC_LOW, .slot = slot,
				  .old = old, .val = vc->v[slot] };
	/* past the one-byte difference, the address slot takes it too */
	if (by_addr && (t & 1)) {
		g->vcl.lc = 1;
		g->vcl.lslot = lslot;
		g->vcl.lold = vc->lc[lslot];
		vc->lc[lslot] = *v;
	}
	g->st.value_bytes += nb;
	g->st.vc_recs[nb == 9 ? 4 : nb == 5 ? 3 : nb - 1]++;
	if (t == AE_VC_BY_ADDR_HIT && by_addr)
		g->st.lc_hits++;
	cnt = prof_of(g, e);
	if (cnt)
		vc_count(cnt, by_addr, e->flag == AE_VAL_REG_VC_LOW, *v, old,
			 g->vcl.lc ? g->vcl.lold : vc->lc[lslot], !vc->unknown, nb);
	return 0;
}

/* The next witness, looking past the bytes of handlers that run first. */
static int peek(struct ae_regen *g, unsigned int width, uint64_t *v, uint64_t pc)
{
	for (;;) {
		uint64_t p = g->pos, m = g->mi;
		struct ae_smk *k;
		int blocked = 0;

		for (;;) {
			/* (a switch point writes no byte, and a signal at its
			 * switch-in comes after it) */
			while ((k = mk(g, m)) && (!is_active(k) || (is_switch(k) && k->pos == p)))
				m++;
			if (!k && p == g->s->end && !g->s->final) {
				blocked = 1;	/* markers at p may still come */
				break;
			}
			if (!k || k->m.type != TRBUF_MK_SIGNAL || k->pos != p)
				break;
			if (k->end == UINT64_MAX) {
				if (g->s->final)
					return rerr(g, pc, "cannot look past a signal handler that never returned");
				blocked = 1;
				break;
			}
			p = mk(g, k->end)->pos;
			m = k->end + 1;
		}
		if (!blocked && p + width <= g->s->end) {
			*v = 0;
			memcpy(v, g->s->buf + (p - g->s->base), width);
			return 0;
		}
		if (wait_more(g)) {
			if (g->s->final == 2) {
				g->stop = AE_END_CAPTURE;
				return -1;
			}
			return rerr(g, pc, "trace truncated at a branch");
		}
	}
}

static int witness(struct ae_regen *g, const struct ae_rev *e, uint64_t pc)
{
	uint64_t w;

	if (consume(g, e->width, &w, pc))
		return -1;
	g->st.witness_bytes += e->width;
	if (g->debug)
		fprintf(stderr, "aetrace: %switness %llu at %#llx, offset %llu\n", g->name,
			(unsigned long long)w, (unsigned long long)pc,
			(unsigned long long)(g->pos - e->width));
	if (w != e->a) {
		char msg[128];

		snprintf(msg, sizeof(msg), "corrupt trace: witness %llu where %u was expected",
			 (unsigned long long)w, e->a);
		g->pos -= e->width;
		return rerr(g, pc, msg);
	}
	return 0;
}

static int emit(struct ae_regen *g, uint64_t pc, unsigned int len)
{
	g->st.insns++;
	return g->sink->recs ? put_rec(g, 0, pc, len) : 0;
}

/* What a longjmp to setjmp record s restores (data tracing). */
static void setjmp_data(struct ae_regen *g, struct sj *s)
{
	s->ds = g->ds;
	s->call = g->data && g->n ? g->fr[g->n - 1].call : NULL;
	s->call_pc = g->data && g->n ? g->fr[g->n - 1].call_pc : 0;
}

static int setjmp_record(struct ae_regen *g, uint64_t sp)
{
	if (g->debug)
		fprintf(stderr, "aetrace: %ssetjmp sp %#llx depth %zu\n", g->name,
			(unsigned long long)sp, g->n);
	/* after setjmp returns, rsp = sp + 8 and the shadow loses one entry */
	for (size_t i = 0; i < g->nsj; i++)
		if (g->sj[i].sp == sp + 8) {
			g->sj[i].depth = g->n - 1;
			setjmp_data(g, &g->sj[i]);
			return 0;
		}
	if (g->nsj == g->capsj) {
		size_t cap = g->capsj ? g->capsj * 2 : 16;
		struct sj *n = realloc(g->sj, cap * sizeof(*n));

		if (!n)
			return rerr(g, sp, "out of memory");
		g->sj = n;
		g->capsj = cap;
	}
	g->sj[g->nsj].sp = sp + 8;
	g->sj[g->nsj].depth = g->n ? g->n - 1 : 0;
	setjmp_data(g, &g->sj[g->nsj]);
	g->nsj++;
	return 0;
}

static int longjmp_record(struct ae_regen *g, uint64_t sp, uint64_t pc)
{
	for (size_t i = 0; i < g->nsj; i++)
		if (g->sj[i].sp == sp) {
			struct frame f = { .ds = g->sj[i].ds, .call = g->sj[i].call,
					   .call_pc = g->sj[i].call_pc };

			g->n = g->sj[i].depth;
			g->vcl.valid = 0;
			if (!g->data) {
				g->ds.known = 0;
				ae_df_set(&g->ds, AE_DF_RSP, sp, 8);
				return 0;
			}
			/* the landing: setjmp's return point, registers from
			 * the jmp_buf (those at setjmp's entry), %rsp restored */
			ae_df_set(&g->ds, AE_DF_RSP, sp, 8);
			f.ds.v[AE_DF_RSP] = sp;
			f.ds.known |= 1u << AE_DF_RSP;
			return data_return(g, &f, pc);
		}
	return rerr(g, pc, "longjmp to a stack pointer no setjmp recorded");
}

static int run_loop(struct ae_regen *g, uint64_t pc);

/* One level of execution (the program, or a signal handler): a longjmp
 * out of a handler unwinds to the level it lands in and resumes there. */
static int run(struct ae_regen *g, uint64_t start)
{
	if (setjmp(g->unwind[g->level])) {
		g->in_emu = 0;	/* (a longjmp out of a handler run in a hook) */
		return run_loop(g, g->unwind_pc);
	}
	return run_loop(g, start);
}

/* Is a switch point at this offset among the markers known? Those before
 * it came before it in time, so none is still to come. */
static int switch_pending(struct ae_regen *g)
{
	struct ae_smk *k;

	if (!switches_left(g))
		return 0;
	next_mk(g);
	for (uint64_t i = g->mi; (k = mk(g, i)) && k->pos == g->pos; i++)
		if (is_active(k) && is_switch(k))
			return 1;
	return 0;
}

/* Wait while markers at the current position may still come. */
static inline void wait_markers_here(struct ae_regen *g)
{
	struct ae_smk *k;

	/* a switch point at no instruction of the twin (in the runtime's
	 * or the vDSO's code) is never reached: taken where this offset's
	 * markers are first needed, so that those after it are waited for */
	while (switches_left(g) && (k = next_mk(g)) && is_switch(k) && k->pos == g->pos &&
	       !mk_ip(g, k))
		take_switch(g, 0);
	while (g->pos == g->s->end && !g->s->final && g->ops.wait && !switch_pending(g))
		ops_wait(g);
}

/*
 * No marker at this offset and none still to come here: the next one to
 * take is beyond it (or there is none, and the stream has bytes past
 * it, so none can come). What wait_markers_here() and next_mk() would
 * find then is nothing, so the checks at and after every instruction
 * return at once (a fifth of regeneration's time went to them).
 */
static inline int no_marker_here(struct ae_regen *g)
{
	const struct ae_smk *k = mk(g, g->mi);

	return g->pos < g->s->end && (!k || (is_active(k) && k->pos > g->pos));
}

/* A SIGNAL, a switch point, or a kill (an EXIT not in a system call):
 * placed at its ip. */
static int stops_at_ip(const struct ae_smk *k)
{
	return k->m.type == TRBUF_MK_SIGNAL || is_switch(k) ||
	       (k->m.type == TRBUF_MK_EXIT && !(k->m.flags & AE_MK_EXIT_AT_SYSCALL));
}

/*
 * Is pc the ip a signal was delivered at, reached again (after leaving
 * it) with the same %rsp, no trace byte read and no other marker taken
 * since? Then the marker fitted this visit as well as the one it was
 * given: a branch-free leaf called twice from one frame. (A marker taken
 * in between came later in time; if it could have been the second
 * visit's too, its own watch says so. A context switch in between is
 * not seen here: its time order would settle it, but the trace is
 * refused.) Returns -1 after the error, 0.
 */
static int revisited(struct ae_regen *g, uint64_t pc)
{
	char msg[256];

	if (!g->vw.active)
		return 0;
	next_mk(g);
	if (g->pos != g->vw.pos || g->mi != g->vw.mi) {
		g->vw.active = 0;
		return 0;
	}
	if (pc != g->vw.ip) {
		g->vw.left = 1;
		return 0;
	}
	if (!g->vw.left || !(g->ds.known & (1u << AE_DF_RSP)) || g->ds.v[AE_DF_RSP] != g->vw.sp)
		return 0;
	g->vw.active = 0;
	snprintf(msg, sizeof(msg),
		 "SIGNAL marker %llu at offset %llu: its ip is reached again with its %%rsp %#llx before another trace byte is read: which visit the signal interrupted is ambiguous",
		 (unsigned long long)g->vw.index, (unsigned long long)g->vw.mpos,
		 (unsigned long long)g->vw.sp);
	return rerr(g, pc, msg);
}

/* Take the pending switch point at its ip, pc; watch: a later visit of
 * pc could be at this offset too (see at_insn()). */
static void place_switch(struct ae_regen *g, uint64_t pc, int watch)
{
	g->sww.ip = pc;
	g->sww.sp = g->ds.v[AE_DF_RSP];
	g->sww.pos = g->pos;
	g->sww.active = watch && (g->ds.known & (1u << AE_DF_RSP));
	g->sww.left = 0;
	take_switch(g, 1);
	g->sww.mi = g->mi;
	wait_markers_here(g);
}

/* The last switch point placed at its ip, reached again at its offset
 * with its %rsp and no marker taken since (revisited()'s case): which
 * visit was switched out is ambiguous, so it is counted as not placed. */
static void switch_revisited(struct ae_regen *g, uint64_t pc)
{
	if (!g->sww.active)
		return;
	/* (a marker taken since came later: a handler that returned here) */
	next_mk(g);
	if (g->pos != g->sww.pos || g->mi != g->sww.mi) {
		g->sww.active = 0;
	} else if (pc != g->sww.ip) {
		g->sww.left = 1;
	} else if (g->sww.left && (g->ds.known & (1u << AE_DF_RSP)) &&
		   g->ds.v[AE_DF_RSP] == g->sww.sp) {
		g->sww.active = 0;
		g->st.switches_unplaced++;
		g->st.switches_ambiguous++;
		if (g->debug)
			fprintf(stderr, "aetrace: %sthe last switch point's ip %#llx is reached again at offset %llu with its %%rsp: not placed\n",
				g->name, (unsigned long long)pc, (unsigned long long)g->pos);
	}
}

/*
 * The twin's instruction at a, or the first past the assembler padding
 * that begins there: nops no instrumented address maps to (the two
 * layouts pad apart), which a marker's ip in a sequence before them
 * (an edge's stub, the records after an instruction) resumes past.
 */
static uint64_t past_padding(struct ae_regen *g, uint64_t a)
{
	for (int i = 0; i < 16 && !ae_is_original(g->p, a); i++) {
		const struct ae_dinsn *x = ae_decode(g->p, a);

		if (!x || x->kind != AE_K_PLAIN || x->nev)
			break;
		a += x->len;
	}
	return a;
}

/*
 * Marker k, at pc and this offset, was taken in a sequence still to
 * write its bytes (a taken edge's witness stub): it came after them in
 * program order, and pc may have been reached at this offset before (a
 * loop's head). A signal is delivered where those bytes are read
 * (consume()); a kill waits for the branch whose witness it cut
 * (stop_side(), killed_before(), killed_amid()) to name this edge.
 */
static int after_its_bytes(const struct ae_regen *g, const struct ae_smk *k, uint64_t pc)
{
	return k->via_seq && (k->m.type == TRBUF_MK_SIGNAL || is_switch(k) ||
			      (k->m.type == TRBUF_MK_EXIT && stops_at_ip(k) && g->kill_edge != pc));
}

/* pc may be reached again at this offset (a recursion's returns write
 * nothing): where the records make %rsp known, marker k's %rsp names
 * the visit. Is it another one? */
static int other_sp(const struct ae_regen *g, const struct ae_smk *k)
{
	return stops_at_ip(k) && k->sp_known && (g->ds.known & (1u << AE_DF_RSP)) &&
	       g->ds.v[AE_DF_RSP] != k->sp;
}

/* Is marker k's raw ip the return address of the twin's instruction
 * at pc, len bytes long: a task switched out in that system call? Its
 * mapping (mk_ip()) is not pc + len where only padding follows the call
 * (musl's __restore_rt, __unmapself): it runs on into the next function. */
static int returns_from(const struct ae_regen *g, const struct ae_smk *k, uint64_t pc,
			unsigned int len)
{
	return k->m.ip > len && ae_map_exact(g->p, k->m.ip - len) == pc;
}

/*
 * Before instruction pc: wait while markers at this position may still
 * come; deliver a signal that interrupted pc; stop at the task's end.
 * watch: pc's own records are still to read (1), so a later visit of pc
 * would be at this offset too (revisited()); after them (0), a later
 * visit writes its records first.
 * Returns 1 to re-examine pc (a handler ran), 0 to execute it, -1.
 */
static int at_insn(struct ae_regen *g, uint64_t pc, int watch)
{
	struct ae_smk *k;

	if (!g->vw.active && !g->sww.active && no_marker_here(g)) {
		ae_tstream_consumed(g->s, g->pos);
		return 0;
	}
	wait_markers_here(g);
	ae_tstream_consumed(g->s, g->pos);
	ae_tstream_markers_done(g->s, g->mi < g->mk_keep ? g->mi : g->mk_keep);
	if (revisited(g, pc))
		return -1;
	switch_revisited(g, pc);
	k = next_mk(g);
	/* (a kill on the edge to pc, before the padding there: none of it ran) */
	if (!k || k->pos != g->pos ||
	    (mk_ip(g, k) != pc && !(k->m.type == TRBUF_MK_EXIT && g->kill_edge == pc &&
				    past_padding(g, pc) == mk_ip(g, k))))
		return 0;
	if (after_its_bytes(g, k, pc))
		return 0;
	if (other_sp(g, k)) {
		/* (a kill the edge it cut led to: no other visit to wait for) */
		if (k->m.type == TRBUF_MK_EXIT && g->kill_edge == pc) {
			char msg[192];

			snprintf(msg, sizeof(msg),
				 "EXIT marker %llu: its %%rsp %#llx is not the %#llx of the edge whose witness it cut",
				 (unsigned long long)k->index, (unsigned long long)k->sp,
				 (unsigned long long)g->ds.v[AE_DF_RSP]);
			return rerr(g, pc, msg);
		}
		k->sp_missed = 1;
		return 0;
	}
	if (is_switch(k)) {
		place_switch(g, pc, watch);
		return 1;
	}
	if (k->m.type == TRBUF_MK_SIGNAL) {
		uint64_t index = k->index, mpos = k->pos;

		if (deliver(g) || g->stop)
			return -1;	/* (a handler that ended the task) */
		next_mk(g);
		g->vw.ip = pc;
		g->vw.sp = g->ds.v[AE_DF_RSP];
		g->vw.pos = g->pos;
		g->vw.mpos = mpos;
		g->vw.index = index;
		g->vw.mi = g->mi;
		g->vw.active = watch && (g->ds.known & (1u << AE_DF_RSP));
		g->vw.left = 0;
		return 1;
	}
	if (k->m.type == TRBUF_MK_EXIT || k->m.type == TRBUF_MK_EXEC) {
		if (!(k->m.flags & AE_MK_EXIT_AT_SYSCALL))
			return end_at(g, k);
		g->finishing = 1;
	}
	return 0;
}

/*
 * After the records written before pc, before pc itself: a signal or a
 * kill that came between them (the %fs-base sequence ends past its
 * bytes) is taken here, as at_insn() does. Returns as at_insn().
 */
static int after_records(struct ae_regen *g, uint64_t pc)
{
	struct ae_smk *k;

	if (no_marker_here(g))
		return 0;
	wait_markers_here(g);
	k = next_mk(g);
	if (!k || k->pos != g->pos || !stops_at_ip(k))
		return 0;
	return at_insn(g, pc, 0);
}

static int writes_bytes(const struct ae_dinsn *d, int after);

/* After an instruction, before what it writes after it: take the switch
 * points whose ip is the next one (and %rsp the task's there), but those
 * cut in a sequence that leads there (a back edge's stub), which come
 * where its bytes are read, as at_insn() leaves them; seq: those in the
 * sequence of the records it writes after it too (a system call's,
 * whose own markers, a fork's, an exec's, its end's, came after the
 * point in time: the stream has them only once it is taken). */
static inline void switch_after(struct ae_regen *g, uint64_t next, int seq)
{
	struct ae_smk *k;

	if (no_marker_here(g))
		return;
	/* (each one taken waits for the markers after it: switched out
	 * again there, or the system call's own) */
	while (switches_left(g) && (k = next_mk(g)) && k->pos == g->pos && is_switch(k) &&
	       mk_ip(g, k) == next && !other_sp(g, k) && (seq || !after_its_bytes(g, k, next)))
		place_switch(g, next, 1);
}

/*
 * Before the system call at pc (syscall, int $0x80; after the records
 * written before it, if any): a switch point whose ip is next, the
 * instruction after it, is a task switched out in the call. The call
 * completes (returns to user mode) in the slice it was switched in to,
 * so it is taken there, after the point: a signal that woke the task is
 * delivered first, at pc when it restarts an SA_RESTART call (which
 * then runs once, after the handler, as in a standalone capture and the
 * stepper), and the call's own markers (a fork's, an exec's) follow.
 * So is one whose raw ip is the call's return address where that maps
 * elsewhere (returns_from(): a sigreturn preempted before the registers
 * are restored, an exit). Those the call's records after it lead to
 * (seq) are such points too, as in switch_after(), and so are those in
 * a witness stub right after it whose %rcx is their ip: the return
 * address the syscall instruction left, so switched out in the call,
 * not amid the stub (which writes its bytes later). A task preempted
 * right after the call returned is indistinguishable and taken the same
 * way. Returns 1 if one was taken (pc is re-examined).
 */
static int switched_in_call(struct ae_regen *g, uint64_t pc, uint64_t next, int seq)
{
	struct ae_smk *k;

	wait_markers_here(g);
	if (!switches_left(g) || !(k = next_mk(g)) || k->pos != g->pos || !is_switch(k) ||
	    (mk_ip(g, k) != next && !returns_from(g, k, pc, next - pc)) || other_sp(g, k))
		return 0;
	if (!seq && k->m.cx != k->m.ip && after_its_bytes(g, k, next))
		return 0;
	place_switch(g, pc, 1);
	return 1;
}

/* Was the task killed at this offset with ip next (or past the padding
 * there): in the bytes an instruction writes after it runs, before the
 * first was written? */
static int killed_before(struct ae_regen *g, uint64_t next)
{
	struct ae_smk *k;

	if (no_marker_here(g))
		return 0;
	wait_markers_here(g);
	k = next_mk(g);
	return k && k->pos == g->pos && k->m.type == TRBUF_MK_EXIT &&
	       !(k->m.flags & AE_MK_EXIT_AT_SYSCALL) &&
	       (mk_ip(g, k) == next || (k->via_seq && mk_ip(g, k) == past_padding(g, next)));
}

/* After a system call: did the task end in it (exit, exec), so that the
 * records after it were never written? */
static int ended_here(struct ae_regen *g)
{
	struct ae_smk *k;

	wait_markers_here(g);
	k = next_mk(g);
	return k && k->pos == g->pos &&
	       (k->m.type == TRBUF_MK_EXIT || k->m.type == TRBUF_MK_EXEC);
}

/* The target a dispatch load (`mov TABLE(,%i,8),%r`) takes from entry
 * idx of its table, for the `jmp *%r` that follows. Returns 0 or -1. */
static int dispatch_load(struct ae_regen *g, const struct ae_dinsn *d, uint64_t pc, uint64_t idx)
{
	const uint8_t *t = ae_image_ptr(&g->p->orig, d->disp + idx * 8, 8);

	if (!t)
		return rerr(g, pc, "dispatch-table index outside the table");
	memcpy(&g->loaded_target, t, 8);
	return 0;
}

/* Value records the instruction at pc wrote before executing; `skip`:
 * entered by a call past its argument records (AE_EV_ARGS_AT_CALL). */
static int records_before(struct ae_regen *g, struct ae_dinsn *d, uint64_t pc,
			  struct insn_vals *iv, int skip)
{
	unsigned int ghits = 0;	/* records of a group still to take as hits */

	for (int i = 0; i < d->nev; i++) {
		const struct ae_rev *e = &d->ev[i];
		uint64_t v;

		if (e->kind == AE_EV_WIT_BEFORE) {
			if (witness(g, e, pc))
				return -1;
			continue;
		}
		if (e->kind == AE_EV_TARGET_LOADED) {
			iv->loaded = 1;
			continue;
		}
		if (e->kind == AE_EV_EXPAND) {
			iv->expand = e;
			continue;
		}
		if (e->kind == AE_EV_ARGS_AT_CALL) {
			iv->args_at_call = e->a;
			continue;
		}
		if (skip && e->kind == AE_EV_VAL)
			continue;
		if (e->kind == AE_EV_SHADOW_POP) {
			if (!g->n)
				return rerr(g, pc, "pop of a return address with an empty call stack");
			g->n--;
			continue;
		}
		if (e->kind != AE_EV_VAL)
			continue;
		if (e->flag == AE_VAL_REG_VC || e->flag == AE_VAL_REG_VC_LOW) {
			uint64_t at = g->pos, t;
			int t0 = -1;

			if (e->a > 15)
				return rerr(g, pc, "register record names no register");
			if (AE_VC_GROUP_OF(e->b)) {
				/* a group: how many of its records hit, if any */
				if (consume(g, 1, &t, pc))
					return -1;
				t0 = (int)t;
				for (unsigned int c = 1; c <= AE_VC_GROUP_OF(e->b); c++)
					if (t == AE_VC_GROUP_HIT(c)) {
						ghits = c;
						t0 = -1;
						g->st.value_bytes++;
						g->st.vc_groups++;
						g->st.vc_group_hits += c;
					}
				if (g->debug)
					fprintf(stderr, "aetrace: %sgroup before %#llx: %u of %u hit\n",
						g->name, (unsigned long long)pc, ghits,
						AE_VC_GROUP_OF(e->b));
			}
			if (ghits) {
				struct vcache *vc = vc_for(g, pc, 1);
				struct ae_vcprof_count *cnt = prof_of(g, e);

				if (!vc)
					return -1;
				v = vc->v[AE_VC_SLOT_OF(e->b)];
				if (e->flag == AE_VAL_REG_VC_LOW)
					v &= 0xffffffffull;
				ghits--;
				if (cnt) {
					/* a zero difference; the tag byte is the first one's */
					cnt->recs++;
					cnt->one_byte++;
					cnt->bytes += AE_VC_GROUP_OF(e->b) != 0;
				}
			} else if (vc_value(g, e, pc, &v, t0)) {
				return -1;
			}
			if (g->debug)
				fprintf(stderr, "aetrace: %sreg %s = %#llx before %#llx, %llu bytes (value cache%s%s)\n",
					g->name, df_names[e->a], (unsigned long long)v,
					(unsigned long long)pc, (unsigned long long)(g->pos - at),
					e->flag == AE_VAL_REG_VC_LOW ? ", low half" : "",
					g->pos == at ? ", group hit" : "");
			ae_df_set(&g->ds, e->a, v, 8);
			continue;
		}
		if (e->flag == AE_VAL_JTIDX_KNOWN || e->flag == AE_VAL_JTLOAD_KNOWN) {
			/* the table access's address register, after k's
			 * register records */
			if (e->a > 15 || !((g->ds.known >> e->a) & 1))
				return rerr(g, pc, "a table index the data records should make known is unknown");
			v = g->ds.v[e->a];
			if (e->flag == AE_VAL_JTIDX_KNOWN) {
				iv->jtidx = v;
				iv->have_jt = 1;
			} else if (dispatch_load(g, d, pc, v)) {
				return -1;
			}
			continue;
		}
		if (e->flag == AE_VAL_VSIB) {
			const struct ae_df_op *op = ae_decode_df(g->p, d, pc);

			if (!op || e->width != ae_df_vsib_bytes(op) || e->width > sizeof(g->vsib))
				return rerr(g, pc, "a gather's index record does not fit the instruction");
			if (consume_bytes(g, e->width, g->vsib, pc))
				return -1;
			count_plain(g, e->width);
			iv->vsib = g->vsib;
			continue;
		}
		if (consume(g, e->width, &v, pc))
			return -1;
		count_plain(g, e->width);
		prof_plain(g, e);
		switch (e->flag) {
		case AE_VAL_TARGET:
			iv->target = v;
			iv->have_target = 1;
			break;
		case AE_VAL_JTIDX:
			iv->jtidx = v;
			iv->have_jt = 1;
			break;
		case AE_VAL_JTLOAD:
			if (dispatch_load(g, d, pc, v))
				return -1;
			break;
		case AE_VAL_SETJMP_SP:
			if (setjmp_record(g, v))
				return -1;
			break;
		case AE_VAL_LONGJMP_SP:
			iv->ljsp = v;
			iv->have_lj = 1;
			break;
		case AE_VAL_REPCNT:
			if (g->debug)
				fprintf(stderr, "aetrace: %srep count %llu at offset %llu before %#llx\n", g->name,
					(unsigned long long)v, (unsigned long long)(g->pos - e->width),
					(unsigned long long)pc);
			iv->repcnt = v;
			iv->have_rep = 1;
			ae_df_set(&g->ds, 1, v, 8);
			break;
		case AE_VAL_REG:
			if (e->a > 15)
				return rerr(g, pc, "register record names no register");
			if (g->debug)
				fprintf(stderr, "aetrace: %sreg %s = %#llx at offset %llu before %#llx\n", g->name,
					df_names[e->a], (unsigned long long)v,
					(unsigned long long)(g->pos - e->width), (unsigned long long)pc);
			ae_df_set(&g->ds, e->a, v, 8);
			break;
		case AE_VAL_FSBASE:
			g->ds.fs = v;
			g->ds.fs_known = 1;
			break;
		case AE_VAL_RETADDR: {
			uint64_t o = ae_map_resume(g->p, v);

			if (!o)
				return rerr(g, pc, "pushed return address is not instrumented code");
			if (push(g, o, 0))
				return -1;
			break;
		}
		default:
			return rerr(g, pc, "unknown value record in schema");
		}
	}
	if (skip && (!iv->expand || iv->expand->a != (uint32_t)skip))
		return rerr(g, pc, "a call past a routine's argument records enters another routine");
	return 0;
}

/*
 * Instruction traces follow %rsp and %rbp alone, from where a signal's
 * marker gives %rsp on (deliver()), so that the next markers can name the
 * visit of their ip by %rsp (at_insn()). Nothing known: nothing to do.
 */
#define SP_REGS ((1u << AE_DF_RSP) | (1u << AE_DF_RBP))
static void sp_step(struct ae_regen *g, struct ae_dinsn *d, uint64_t pc)
{
	const struct ae_df_op *op;

	if (!(g->ds.known & SP_REGS) || d->no_sp)
		return;
	op = ae_decode_df(g->p, d, pc);
	if (!op) {
		g->ds.known = 0;
		return;
	}
	if (!(op->writes & SP_REGS) && op->kind != AE_DF_LEAVE) {
		d->no_sp = 1;
		return;
	}
	ae_df_step(op, pc, &g->ds);
	g->ds.known &= SP_REGS;
	g->ds.fs_known = 0;
}

/* The same at return d through frame f: the ABI restores both (and a
 * `ret $n` pops n bytes more). */
static void sp_return(struct ae_regen *g, struct ae_dinsn *d, uint64_t pc, const struct frame *f)
{
	const struct ae_df_op *op;

	if (!f->call)
		return;
	op = ae_decode_df(g->p, d, pc);
	if (!op) {
		g->ds.known = 0;
		return;
	}
	g->ds.v[AE_DF_RSP] = f->ds.v[AE_DF_RSP] + op->retimm;
	g->ds.v[AE_DF_RBP] = f->ds.v[AE_DF_RBP];
	g->ds.known = f->ds.known & SP_REGS;
}

/*
 * Do n iterations of string instruction op, from the addresses state s
 * gives, stay in the user address space (below 2^47, or 2^56 for an
 * address a 5-level page table gave)? Where they did not, the CPU
 * faulted before the last: a corrupt count, which regenerated as it is
 * would emit records for hours. Registers s does not know pass, and so
 * do addresses above 2^56 (a tagged pointer, LAM_U57).
 */
static int rep_in_space(const struct ae_df_op *op, uint64_t pc,
			const struct ae_df_state *s, uint64_t n)
{
	struct ae_df_access acc[4];
	int missing, na = s->df_known ? ae_df_accesses(op, pc, s, acc, &missing) : -1;

	for (int i = 0; i < na; i++) {
		uint64_t a = acc[i].addr, top = a < (1ull << 47) ? 1ull << 47 : 1ull << 56;
		uint64_t span = (n - 1) * op->ssize;	/* n <= 2^47 / ssize */

		if (a >= 1ull << 56)
			continue;
		if (s->df ? span > a : span > top - a - op->ssize)
			return 0;
	}
	return 1;
}

/* n iterations of instruction d (a rep instruction is one step per
 * iteration; one with a zero count executes once and touches nothing;
 * one of more than 2^47 bytes, or whose addresses leave the address
 * space, is corrupt) */
static int iterate(struct ae_regen *g, struct ae_dinsn *d, uint64_t pc,
		   struct insn_vals *iv, uint64_t n)
{
	const struct ae_df_op *op = iv->have_rep && n > 1 ? ae_decode_df(g->p, d, pc) : NULL;

	if (op && op->ssize &&
	    (n > (1ull << 47) / op->ssize || (g->data && !rep_in_space(op, pc, &g->ds, n))))
		return rerr(g, pc, "corrupt trace: a rep instruction's iterations run beyond the address space");
	iv->emitted += n;
	for (uint64_t i = 0; i < n; i++) {
		if (emit(g, pc, d->len))
			return -1;
		if (g->data && !(iv->have_rep && !iv->repcnt) &&
		    data_exec(g, d, pc, iv->vsib))
			return -1;
	}
	return 0;
}

/*
 * Rep instruction d at pc, *left iterations to go: a signal or a kill
 * at pc at this offset interrupted it after the iterations its marker's
 * %rcx does not leave. Runs those, then takes the marker (at_insn()),
 * for each such marker; *left: the iterations still to run.
 * Returns 0 or -1.
 */
static int rep_interrupted(struct ae_regen *g, struct ae_dinsn *d, uint64_t pc,
			   struct insn_vals *iv, uint64_t *left)
{
	for (;;) {
		struct ae_smk *k;
		char msg[192];
		int r;

		wait_markers_here(g);
		k = next_mk(g);
		if (!k || k->pos != g->pos || !stops_at_ip(k) || mk_ip(g, k) != pc)
			return 0;
		/* not this visit's (at_insn() leaves it or refuses it): no
		 * iteration for it */
		if (after_its_bytes(g, k, pc) || other_sp(g, k))
			return at_insn(g, pc, 0) < 0 ? -1 : 0;
		/* (at its ip, a rep with iterations left has not run them all) */
		if (k->m.cx > *left || (!k->m.cx && *left)) {
			snprintf(msg, sizeof(msg),
				 "%s marker %llu: its %%rcx %#llx does not fit the %llu iterations the rep instruction had left",
				 mk_name(k),
				 (unsigned long long)k->index, (unsigned long long)k->m.cx,
				 (unsigned long long)*left);
			return rerr(g, pc, msg);
		}
		if (iterate(g, d, pc, iv, *left - k->m.cx))
			return -1;
		*left = k->m.cx;
		if (is_switch(k)) {
			switch_here(g, 1);
			continue;
		}
		g->rep_cut = 1;
		r = at_insn(g, pc, 0);
		g->rep_cut = 0;
		if (r <= 0)
			return r;
	}
}

/*
 * After repe/repne d at pc, *left iterations at most to go: a signal or
 * a kill at this offset whose ip is past d (in the sequences of its
 * fall-through witness or of its count after) came after its last
 * iteration, with %rcx that count. Runs the iterations up to it, so that
 * the next byte's read delivers it after them; *taken: one was.
 * Returns 1 for a kill (the rest was never written), 0, or -1.
 */
static int rep_ended(struct ae_regen *g, struct ae_dinsn *d, uint64_t pc,
		     struct insn_vals *iv, uint64_t *left, int *taken)
{
	struct ae_smk *k;
	char msg[192];

	wait_markers_here(g);
	k = next_mk(g);
	if (!k || k->pos != g->pos || !stops_at_ip(k))
		return 0;
	if (mk_ip(g, k) != pc + d->len || k->m.cx > *left) {
		snprintf(msg, sizeof(msg),
			 "%s marker %llu after a repe/repne instruction's last iteration: %s",
			 mk_name(k), (unsigned long long)k->index,
			 k->m.cx > *left ? "its %rcx is more than the iterations the instruction had left" :
			 "its ip is not the next instruction's");
		return rerr(g, pc, msg);
	}
	if (iterate(g, d, pc, iv, *left - k->m.cx))
		return -1;
	/* a zero count's one execution came before it too */
	if (!iv->repcnt && !iv->emitted && iterate(g, d, pc, iv, 1))
		return -1;
	*left = k->m.cx;
	*taken = 1;
	g->rep_cut = k->m.type == TRBUF_MK_SIGNAL;	/* delivered by the next read */
	return k->m.type == TRBUF_MK_EXIT;
}

/*
 * Repe/repne d at pc, *left iterations at most to go: aecc writes its
 * fall-through witness, if any, then the count it stopped at (a signal
 * or a kill between: rep_ended()). Sets *left to the iterations still
 * to run. Returns 0 or -1.
 */
static int rep_after(struct ae_regen *g, struct ae_dinsn *d, uint64_t pc,
		     struct insn_vals *iv, uint64_t *left)
{
	const struct ae_rev *cnt = NULL;
	uint64_t after;
	int r, taken = 0;

	for (int i = 0; i < d->nev; i++)
		if (d->ev[i].kind == AE_EV_VAL_AFTER && d->ev[i].flag == AE_VAL_REPCNT_AFTER)
			cnt = &d->ev[i];
	if (!cnt)
		return 0;
	if (!iv->have_rep)
		return rerr(g, pc, "corrupt schema: a repe/repne instruction's count after it without its count before");
	r = rep_ended(g, d, pc, iv, left, &taken);
	for (int i = 0; !r && i < d->nev; i++)
		if (d->ev[i].kind == AE_EV_WIT_FALL) {
			if (witness(g, &d->ev[i], pc))
				return -1;
			iv->fall_read = 1;
			r = rep_ended(g, d, pc, iv, left, &taken);
		}
	if (r) {
		*left = 0;	/* killed: at_insn() of the next stops */
		return r < 0 ? -1 : 0;
	}
	if (consume(g, cnt->width, &after, pc))
		return -1;
	count_plain(g, cnt->width);
	/* at least one iteration after its count, unless a marker said
	 * it had run them all */
	if (after > *left || (taken ? after != *left : *left && after == *left))
		return rerr(g, pc, "corrupt trace: a repe/repne instruction's count after it does not fit the iterations it had left");
	*left -= after;
	return 0;
}

/* The instruction itself. */
static int execute(struct ae_regen *g, struct ae_dinsn *d, uint64_t pc,
		   struct insn_vals *iv)
{
	uint64_t left = iv->have_rep ? iv->repcnt : 1;

	if (d->kind == AE_K_CALL || d->kind == AE_K_CALL_IND) {
		g->pre = g->ds;
		g->call = d;
		g->call_pc = pc;
	}
	if (iv->have_rep && rep_interrupted(g, d, pc, iv, &left))
		return -1;
	if (rep_after(g, d, pc, iv, &left))
		return -1;
	if (iv->have_rep && !iv->repcnt)
		left = !iv->emitted;
	if (iterate(g, d, pc, iv, left))
		return -1;
	if (!g->data)
		sp_step(g, d, pc);
	return 0;
}

/* Is pc the sigreturn system call of the twin's __restore_rt (every
 * handler returns through it: musl's sigaction sets it)? */
static int in_restorer(const struct ae_regen *g, uint64_t pc)
{
	return pc > g->p->restorer && pc < g->p->restorer + 16;
}

/*
 * After a system call: switch points at this offset before its own
 * marker (a sigreturn's, a fork's) came before that marker in time, so
 * the task passed them already (where no ip matched: in the kernel).
 */
static void pass_switches(struct ae_regen *g, uint64_t next)
{
	struct ae_smk *k;
	uint64_t i, to;

	/* a handler's sigreturn: its hook may wait for room after the
	 * registers are restored, so a switch point at the ip it returns
	 * to comes before its marker */
	while (g->level > 0 && in_restorer(g, g->sys_pc) && (k = next_mk(g)) && is_switch(k) &&
	       k->pos == g->pos && mk_ip(g, k) == g->level_ip[g->level])
		switch_here(g, 1);
	for (i = g->mi; (k = mk(g, i)) && k->pos == g->pos; i++)
		if (is_active(k) && !is_switch(k))
			break;
	if (!k || k->pos != g->pos ||
	    (k->m.type != TRBUF_MK_SIGRETURN && k->m.type != TRBUF_MK_FORK))
		return;
	to = k->m.type == TRBUF_MK_SIGRETURN ? g->level_ip[g->level] : next;
	while ((k = next_mk(g)) && is_switch(k))
		take_switch(g, mk_ip(g, k) == to);
}

/* What SIGRETURN marker k says a handler changed in its frame, into
 * g->ret_checked and g->ret_changed. Returns 0, or -1 (a corrupt mask). */
static int ctx_marker(struct ae_regen *g, const struct ae_smk *k, uint64_t pc)
{
	const uint64_t gprs = 0x7fff, flags = TRBUF_CTX_STATUS | TRBUF_CTX_DF;
	uint16_t f = k->m.flags & (TRBUF_MKF_CTX_CHECKED | TRBUF_MKF_CTX_FULL | TRBUF_MKF_CTX_FLAGS);
	uint64_t compared = f & TRBUF_MKF_CTX_FULL ? gprs | flags | TRBUF_CTX_VECTOR :
			    f & TRBUF_MKF_CTX_FLAGS ? gprs | flags : gprs;
	const char *why = NULL;
	char msg[200];

	g->ret_checked = f & TRBUF_MKF_CTX_CHECKED ? f : 0;
	g->ret_changed = g->ret_checked ? k->m.arg : 0;
	if (f && !(f & TRBUF_MKF_CTX_CHECKED))
		why = "the flags say what was compared without saying anything was";
	else if (f & TRBUF_MKF_CTX_FULL && f & TRBUF_MKF_CTX_FLAGS)
		why = "the flags say the vector state was compared and that it was not";
	else if (g->ret_changed & ~compared)
		why = "the mask names what was not compared";
	if (why) {
		snprintf(msg, sizeof(msg), "corrupt trace: SIGRETURN marker %llu (flags %#x, changed %#llx): %s",
			 (unsigned long long)k->index, k->m.flags, (unsigned long long)k->m.arg, why);
		return rerr(g, pc, msg);
	}
	return 0;
}

/* After a system call: the end of a handler, a fork, the program's end.
 * Returns 1 when this level is done (sigreturn), 0, or -1. */
static int after_syscall(struct ae_regen *g, uint64_t pc, uint64_t next)
{
	struct ae_smk *k;

	if (g->finishing) {
		g->stop = AE_END_EXIT;
		return -1;
	}
	pass_switches(g, next);
	k = next_mk(g);
	if (!k || k->pos != g->pos)
		return 0;
	if (g->level > 0 && k->m.type == TRBUF_MK_SIGRETURN && in_restorer(g, pc)) {
		/* the handler must return where it interrupted */
		if (mk_ip(g, k) != g->level_ip[g->level])
			return rerr(g, pc, "signal handler returned elsewhere than it interrupted (context changed): not supported");
		if (g->level_cx[g->level] != ~0ull && k->m.cx != g->level_cx[g->level])
			return rerr(g, pc, "signal handler changed the %rcx of the instruction it interrupted, which the regeneration follows (a rep's iterations left, an address): not supported");
		if (ctx_marker(g, k, pc))
			return -1;
		/* a child forked in the handler, back into an expanded routine
		 * its parent was in: what the expansion reads again (markers
		 * taken by handlers at its entry) is named by their index in
		 * the parent's stream */
		if (g->rp && g->rp->done && g->level <= g->rp->inh) {
			if (g->level_exp[g->level])
				return rerr(g, pc, "forked inside a signal handler that interrupted an expanded library routine, it returned into the routine: not supported (build with aecc -fno-ae-memfn)");
			g->rp->inh = g->level - 1;
		}
		g->mi++;
		return 1;
	}
	if (k->m.type == TRBUF_MK_FORK && mk_ip(g, k) == next) {
		/* a vfork child's stores are in the cache before the task
		 * forks again (the kernel ran nothing of it in between): the
		 * new child's copy and a replay's snapshot must have them */
		if (g->vc && (g->vf_mi || g->vc->nvfork) && vc_settle(g))
			return rerr(g, pc, "out of memory");
		/* settling may wait for the vfork child, while the reader
		 * grows (and moves) this task's markers */
		k = mk(g, g->mi);
		g->mi++;
		g->ck_vfork |= !!(k->m.arg2 & CLONE_VFORK);
		if ((k->m.arg2 & CLONE_VM) && (k->m.arg2 & CLONE_VFORK) &&
		    !(k->m.arg2 & CLONE_SETTLS))
			g->vf_mi = g->mi;
		if (g->ops.fork && g->ops.fork(g->ops.ctx, g, &k->m, next))
			return -1;
	}
	return 0;
}

/* Does instruction d write trace bytes before it runs (when after: 1,
 * on its way out)? */
static int writes_bytes(const struct ae_dinsn *d, int after)
{
	for (int i = 0; i < d->nev; i++) {
		const struct ae_rev *e = &d->ev[i];

		if (!e->width || e->kind == AE_EV_PRED)
			continue;
		if (after ? e->kind == AE_EV_VAL_AFTER || e->kind == AE_EV_WIT_FALL ||
			    e->kind == AE_EV_WIT_TAKEN :
			    e->kind != AE_EV_VAL_AFTER && e->kind != AE_EV_WIT_FALL &&
			    e->kind != AE_EV_WIT_TAKEN)
			return 1;
	}
	return 0;
}

/* Branch d's witness on side `taken`, or NULL. */
static const struct ae_rev *edge_witness(const struct ae_dinsn *d, int taken)
{
	for (int i = 0; i < d->nev; i++)
		if (d->ev[i].kind == (taken ? AE_EV_WIT_TAKEN : AE_EV_WIT_FALL))
			return &d->ev[i];
	return NULL;
}

#define SIDE_WORK	64
#define SIDE_SEEN	1024

/*
 * Does side `taken` of branch d at pc run the instruction at ip before it
 * writes a byte, where a task stopped (in a sequence: via_seq)? An edge's
 * witness comes first: only a stop in it (its sequence, which resumes at
 * the edge's target). Then instructions that write nothing, through
 * direct jumps and both sides of branches; a stop in a sequence is on
 * such a path only in a sequence of it: an edge's witness stub, the
 * records an instruction writes after it, or those ip writes before
 * it (ip reached by an edge without a witness, where ip writes none
 * before it, is not where the task stopped). Returns 1; 0: every path
 * writes a byte first; 2: perhaps (a path leaves through a call, a
 * return, a system call or an indirect jump, which the walk does not
 * follow); -1 when the walk is too long to tell. With raw, the
 * marker's own (instrumented-code) ip: only a stop in an edge's witness
 * stub counts, and only where raw lies in that stub.
 */
static int side_reaches(struct ae_regen *g, const struct ae_dinsn *d, uint64_t pc, int taken,
			uint64_t ip, int via_seq, uint64_t raw)
{
	uint64_t work[SIDE_WORK], *seen;
	int nw = 0, ns = 0, r = 0, maybe = 0;

	if (edge_witness(d, taken))
		return via_seq && past_padding(g, taken ? d->target : pc + d->len) == ip &&
		       (!raw || ae_edge_stub_holds(g->p, pc, taken, raw, ip));
	seen = malloc(SIDE_SEEN * sizeof(*seen));
	if (!seen)
		return -1;
	work[nw++] = taken ? d->target : pc + d->len;
	while (nw && !r) {
		uint64_t a = work[--nw];
		const struct ae_dinsn *x;
		int dup = 0;

		for (int i = 0; i < ns; i++)
			dup |= seen[i] == a;
		if (dup)
			continue;
		if (ns == SIDE_SEEN || nw + 2 > SIDE_WORK) {
			r = -1;
			break;
		}
		seen[ns++] = a;
		x = ae_decode(g->p, a);
		/* a stop in a sequence resumes at ip through it: here only in
		 * a's own records before it (a path that reaches a by an edge
		 * that writes nothing ran no sequence of its); with raw, only
		 * a stub counts */
		if (a == ip && !raw && (!via_seq || (x && writes_bytes(x, 0)))) {
			r = 1;
			break;
		}
		if (x && writes_bytes(x, 0))
			continue;
		if (!x || (x->kind != AE_K_PLAIN && x->kind != AE_K_JMP && x->kind != AE_K_JCC)) {
			maybe = 1;
			continue;
		}
		/* stopped in its records after it: resumes at the next */
		if (x->kind == AE_K_PLAIN && writes_bytes(x, 1))
			r = !raw && via_seq && past_padding(g, a + x->len) == ip;
		else if (x->kind == AE_K_PLAIN)
			work[nw++] = a + x->len;
		else if (x->kind == AE_K_JMP)
			work[nw++] = x->target;
		else if (x->kind == AE_K_JCC)
			for (int t = 0; t < 2; t++) {
				uint64_t to = t ? x->target : a + x->len;

				if (!edge_witness(x, t))
					work[nw++] = to;
				else if (via_seq && past_padding(g, to) == ip &&
					 (!raw || ae_edge_stub_holds(g->p, a, t, raw, ip)))
					r = 1;
			}
	}
	free(seen);
	return r ? r : maybe ? 2 : 0;
}

/*
 * The side of branch d at pc that a kill, or a signal whose handler
 * never returns, at this offset interrupted, where no byte follows to
 * read (a value-cache side writes none before its record), or that a
 * switch point lies on, whose next byte is the next slice's: the one
 * side that may run the marker's ip before its first byte, the other
 * writing one first on every path. Returns 1 taken, 0 fall through, -1
 * (a handler that returns: peek() reads past it; both sides, or
 * neither: peek too), -2 after the error of a kill it cannot place (no
 * byte follows one). Where the task was killed is killed_on_edge()'s.
 */
static int stop_side(struct ae_regen *g, const struct ae_dinsn *d, uint64_t pc)
{
	struct ae_smk *k;
	uint64_t ip;
	int r0, r1, side;

	wait_markers_here(g);
	k = next_mk(g);
	if (!k || k->pos != g->pos || !stops_at_ip(k))
		return -1;
	while (k->m.type == TRBUF_MK_SIGNAL && k->end == UINT64_MAX && !g->s->final &&
	       g->ops.wait) {
		ops_wait(g);
		k = next_mk(g);
	}
	if (k->m.type == TRBUF_MK_SIGNAL && k->end != UINT64_MAX)
		return -1;
	ip = mk_ip(g, k);
	/*
	 * In a sequence: its resume address is an edge's target, which
	 * other edges' witness stubs share; a switch point's side is read
	 * from the next slice's byte instead. Unless there is none: the
	 * task died switched out (its EXIT makes the point moot), and the
	 * kill says the side.
	 */
	if (is_switch(k) && k->via_seq) {
		while (g->pos == g->s->end && !g->s->final && g->ops.wait) {
			ops_wait(g);
			k = next_mk(g);
			if (!k || k->pos != g->pos || !stops_at_ip(k))
				return -1;
			if (!is_switch(k))
				return stop_side(g, d, pc);
		}
		return -1;
	}
	r0 = side_reaches(g, d, pc, 0, ip, k->via_seq, 0);
	r1 = side_reaches(g, d, pc, 1, ip, k->via_seq, 0);
	if (g->debug)
		fprintf(stderr, "aetrace: %sbranch %#llx at offset %llu: %s marker %llu at ip %#llx: fall through %d, taken %d\n",
			g->name, (unsigned long long)pc, (unsigned long long)g->pos, mk_name(k),
			(unsigned long long)k->index, (unsigned long long)ip, r0, r1);
	/* the one side that reaches it (the other may only through a call,
	 * which counted as not reaching before `maybe` existed), else the
	 * one side that may */
	if (r0 < 0 || r1 < 0)
		side = -1;
	else if ((r0 == 1) != (r1 == 1))
		side = r1 == 1;
	else if (!r0 != !r1)
		side = r1 != 0;
	else
		side = -1;
	if (side < 0 && k->m.type == TRBUF_MK_EXIT && r0 == 1 && r1 == 1 && k->via_seq) {
		/*
		 * Both sides reach the kill's twin ip through witness stubs
		 * (two edges into one instruction): the marker's own ip says
		 * whose stub it died in, where it lies in one side's only.
		 */
		int s0 = side_reaches(g, d, pc, 0, ip, 1, k->m.ip);
		int s1 = side_reaches(g, d, pc, 1, ip, 1, k->m.ip);

		if (g->debug)
			fprintf(stderr, "aetrace: %sbranch %#llx: the kill's ip %#llx in a stub of fall through %d, taken %d\n",
				g->name, (unsigned long long)pc, (unsigned long long)k->m.ip, s0, s1);
		if ((s0 == 1 && s1 == 0) || (s0 == 0 && s1 == 1)) {
			side = s1 == 1;
			g->st.kills_in_stub++;
		}
	}
	if (side < 0 && k->m.type == TRBUF_MK_EXIT && (r0 || r1)) {
		/*
		 * No byte follows a kill to say which side ran to it (a
		 * process's exit meets its busy threads there often): the
		 * task ends at the branch, its trace a prefix of what it ran,
		 * as a task of a capture cut short does; nothing is guessed.
		 */
		fprintf(stderr, "aetrace: warning: %sEXIT marker %llu (a kill at trace offset %llu, ip %#llx): %s, so the few instructions from the branch at %#llx to the kill are not in its trace, which ends at the branch (%llu instructions regenerated)\n",
			g->name, (unsigned long long)k->index, (unsigned long long)g->pos,
			(unsigned long long)ip,
			r0 < 0 || r1 < 0 ? "too far down the branch's sides to tell which one ran" :
			"both sides of the branch may reach its ip before a trace byte",
			(unsigned long long)pc, (unsigned long long)g->st.insns);
		g->st.kills_unplaced++;
		end_at(g, k);
		return -2;
	}
	if (side < 0 && k->m.type == TRBUF_MK_EXIT) {
		/* neither side reaches the kill: the marker contradicts the
		 * trace (no byte follows a kill for peek() to read) */
		char msg[160];

		snprintf(msg, sizeof(msg),
			 "EXIT marker %llu (a kill at this offset, ip %#llx): neither side of the branch reaches its ip before a trace byte",
			 (unsigned long long)k->index, (unsigned long long)ip);
		rerr(g, pc, msg);
		return -2;
	}
	if (side < 0)
		return -1;
	return side;
}

/*
 * Was the task killed on side `side` of branch d at pc, before its first
 * byte (a decided branch's too): at the edge's target, or in a sequence
 * of the edge (its witness stub) or of the target (its records before
 * it)? A kill whose ip only lies further down that side (another
 * branch's stub at this offset, the records after an instruction) is
 * not: the side is taken, and what reaches the ip there takes it.
 */
static int killed_on_edge(struct ae_regen *g, const struct ae_dinsn *d, uint64_t pc, int side)
{
	uint64_t to = side ? d->target : pc + d->len;
	const struct ae_dinsn *x;

	if (!killed_before(g, to))
		return 0;
	if (!next_mk(g)->via_seq || edge_witness(d, side))
		return 1;
	x = ae_decode(g->p, past_padding(g, to));
	return x && writes_bytes(x, 0);
}

/* The side predicate pred's next byte names: 1 taken, 0 fall through,
 * or -1. */
static int read_side(struct ae_regen *g, const struct ae_rev *pred, uint64_t pc)
{
	int pool_side = pred->flag & AE_PRED_TAKEN;
	uint64_t w;

	/* a first byte no witness begins with: the other side's
	 * value-cache record */
	if (pred->flag & AE_PRED_VC_OTHER) {
		if (peek(g, 1, &w, pc))
			return -1;
		if (!ae_is_wit_byte(w))
			return !pool_side;
	}
	if (peek(g, pred->width, &w, pc))
		return -1;
	for (uint32_t i = 0; i < pred->b; i++)
		if (pred->pool[i] == w)
			return pool_side;
	return !pool_side;
}

static int cond_branch(struct ae_regen *g, struct ae_dinsn *d, uint64_t pc,
		       uint64_t *next)
{
	const struct ae_rev *pred = NULL, *wt = NULL, *wf = NULL;
	int in_set = 0, kill = 0;

	for (int i = 0; i < d->nev; i++) {
		if (d->ev[i].kind == AE_EV_PRED || d->ev[i].kind == AE_EV_PRED_KNOWN)
			pred = &d->ev[i];
		else if (d->ev[i].kind == AE_EV_WIT_TAKEN)
			wt = &d->ev[i];
		else if (d->ev[i].kind == AE_EV_WIT_FALL)
			wf = &d->ev[i];
	}
	if (!pred)
		return rerr(g, pc, "conditional branch without schema (uninstrumented code?)");
	if (pred->kind == AE_EV_PRED_KNOWN) {
		/* decided by the flags the known registers set */
		const struct ae_df_op *op = g->data ? ae_decode_df(g->p, d, pc) : NULL;
		int t = op ? ae_df_taken(op, &g->ds) : -1;

		if (t < 0)
			return rerr(g, pc, "a branch the data records decide tests flags the regenerator does not know");
		g->st.decided++;
		in_set = t;
	} else {
		in_set = stop_side(g, d, pc);
		if (in_set == -2)
			return -1;
		if (in_set < 0)
			in_set = read_side(g, pred, pc);
		if (in_set < 0)
			return -1;
	}
	/* killed before its side's witness (a decided branch's too):
	 * at_insn() stops at the side */
	if (killed_on_edge(g, d, pc, in_set)) {
		/* taken at the side, so never twice here */
		if (g->kill_skip == g->pos + 1)
			return rerr(g, pc, "a kill at this offset is never reached (its marker's ip or %rsp)");
		g->kill_skip = g->pos + 1;
		g->kill_edge = in_set ? d->target : pc + d->len;
		kill = 1;
	}
	if (in_set) {
		*next = d->target;
		g->st.blocks++;
		return wt && !kill ? witness(g, wt, pc) : 0;
	}
	return wf && !kill ? witness(g, wf, pc) : 0;
}

static int indirect(struct ae_regen *g, const struct ae_dinsn *d, uint64_t pc,
		    const struct insn_vals *iv, uint64_t *next)
{
	uint64_t target;

	if (iv->have_jt) {
		const uint8_t *t = ae_image_ptr(&g->p->orig, d->disp + iv->jtidx * d->scale, 8);

		if (!t)
			return rerr(g, pc, "jump-table index outside the table");
		memcpy(&target, t, 8);
	} else if (iv->loaded) {
		target = g->loaded_target;
	} else if (iv->have_target) {
		/* a target's own records are read when we get there */
		target = ae_map_resume(g->p, iv->target);
		if (!target)
			return rerr(g, pc, "indirect transfer to code that is not instrumented");
	} else {
		return rerr(g, pc, "indirect transfer without a recorded target");
	}
	if (d->kind == AE_K_CALL_IND && push(g, *next, 1))
		return -1;
	*next = target;
	g->st.blocks++;
	if (iv->have_lj) {
		int l;

		if (longjmp_record(g, iv->ljsp, pc))
			return -1;
		if (g->debug)
			fprintf(stderr, "aetrace: %slongjmp to %#llx, depth %zu, level %d\n",
				g->name, (unsigned long long)target, g->n, g->level);
		/* a longjmp out of a signal handler */
		for (l = g->level; l > 0 && g->n < g->level_depth[l]; l--)
			;
		/* out of one delivered at an expanded routine's entry, which
		 * it had interrupted: the routine's instructions before the
		 * signal were never emitted (they come after the handler) */
		for (int i = l + 1; i <= g->level; i++)
			if (g->level_xin[i])
				return rerr(g, pc, "a signal handler left an expanded library routine it interrupted by longjmp (the routine's instructions come after the handler, whose result record they wait for): not regenerated exactly (build with aecc -fno-ae-memfn)");
		if (l < g->level) {
			g->level = l;
			if (g->rp && g->rp->inh > l)
				g->rp->inh = l;	/* (a child left inherited levels) */
			g->unwind_pc = target;
			longjmp(g->unwind[l], 1);
		}
	}
	return 0;
}

/* An expansion in progress (ae_memfn_emu_run()'s callback context). */
struct expansion {
	struct ae_regen *g;
	uint64_t entry, prev_end;
	uint64_t lo, hi;	/* the lowest and highest pc it executed */
	int err;
	/* A run resumed after a signal it was stopped for: its first
	 * `skip` steps (instructions; a rep's iterations) were emitted
	 * before. It stops before step `stop` (X_STOP). */
	uint64_t step, skip, stop;
	/* dry: emit and read nothing, find the steps at which marker `want`
	 * fits (its ip, %rsp, %rcx and trace offset; `bytes`: those the
	 * routine's nested argument records take before the step) */
	int dry;
	const struct ae_smk *want;
	uint64_t want_ip, bytes, nmatch, first;
};

/* expand_insn(): the run stopped before the step a marker interrupted */
#define X_STOP	2

/*
 * The entry of a routine that another one calls or tail-jumps to inside
 * the emulation (memmove -> memcpy): its argument records come next in
 * the stream and must equal the emulated registers. Returns 0 or -1.
 */
static int expand_nested(struct ae_regen *g, const struct ae_dinsn *d, uint64_t pc,
			 const struct ae_df_state *regs)
{
	int entry = 0;

	for (int i = 0; i < d->nev; i++)
		entry |= d->ev[i].kind == AE_EV_EXPAND;
	for (int i = 0; entry && i < d->nev; i++) {
		const struct ae_rev *e = &d->ev[i];
		uint64_t v;

		if (e->kind == AE_EV_EXPAND && e->width)
			return rerr(g, pc, "a routine with a result record called by another expanded routine: not supported");
		if (e->kind != AE_EV_VAL || e->flag != AE_VAL_REG)
			continue;
		if (consume(g, e->width, &v, pc))
			return -1;
		count_plain(g, e->width);
		if (v != regs->v[e->a])
			return rerr(g, pc, "corrupt trace: an argument record differs from the expanded caller's register");
	}
	return 0;
}

/* Bytes of the argument records at d, the entry of a routine another
 * expanded one enters (expand_nested() reads them). */
static uint64_t nested_bytes(const struct ae_dinsn *d)
{
	uint64_t n = 0;
	int entry = 0;

	for (int i = 0; i < d->nev; i++)
		entry |= d->ev[i].kind == AE_EV_EXPAND;
	for (int i = 0; entry && i < d->nev; i++)
		if (d->ev[i].kind == AE_EV_VAL && d->ev[i].flag == AE_VAL_REG)
			n += d->ev[i].width;
	return n;
}

/* A dry run's step at pc: does x->want fit before it? */
static void expand_match(struct expansion *x, const struct ae_dinsn *d, uint64_t pc,
			 const struct ae_df_state *regs, uint64_t step)
{
	const struct ae_smk *k = x->want;

	if (step < x->skip)
		return;
	/* (not at a nested entry: its records come first) */
	if (pc != x->entry && d->nev) {
		x->bytes += nested_bytes(d);
		return;
	}
	if (pc == x->want_ip && regs->v[AE_DF_RSP] == k->sp && regs->v[1] == k->m.cx &&
	    k->pos == x->g->pos + x->bytes && !x->nmatch++)
		x->first = step;
}

static int expand_insn(void *ctx, uint64_t pc, const struct ae_df_state *regs)
{
	struct expansion *x = ctx;
	struct ae_regen *g = x->g;
	struct ae_dinsn *d = ae_decode(g->p, pc);
	const struct ae_df_op *op;
	struct ae_df_access a[4];
	uint64_t step = x->step++;
	int miss = 0, n;

	if (!d) {
		x->err = 1;
		return rerr(g, pc, "an expanded routine left the twin's code");
	}
	if (x->dry) {
		expand_match(x, d, pc, regs, step);
		return 0;
	}
	if (step == x->stop) {
		/* the dry run's %rcx may have been the marker's: the real
		 * run must reach the same place */
		if (pc != x->want_ip || regs->v[AE_DF_RSP] != x->want->sp) {
			x->err = 1;
			return rerr(g, pc, "an expanded routine's run does not reach the step its dry run placed the marker at");
		}
		return X_STOP;
	}
	/* (steps before x->skip were emitted before a signal: only where
	 * they lead counts) */
	if (step >= x->skip) {
		if (pc != x->entry && d->nev && expand_nested(g, d, pc, regs)) {
			x->err = 1;
			return -1;
		}
		if (x->prev_end && pc != x->prev_end)
			g->st.blocks++;
	}
	x->prev_end = pc + d->len;
	if (pc < x->lo)
		x->lo = pc;
	if (pc > x->hi)
		x->hi = pc;
	if (step < x->skip)
		return 0;
	g->st.expanded_insns++;
	if (emit(g, pc, d->len))
		return -1;
	if (!want_mem(g))
		return 0;
	op = ae_decode_df(g->p, d, pc);
	if (!op) {
		x->err = 1;
		return rerr(g, pc, "data tracing cannot follow this instruction of an expanded routine");
	}
	n = ae_df_accesses(op, pc, regs, a, &miss);
	if (n < 0) {
		x->err = 1;
		return rerr(g, pc, "an expanded routine's address needs a register the emulation lacks");
	}
	for (int i = 0; i < n; i++)
		if (put_rec(g, a[i].acc, a[i].addr, a[i].size))
			return -1;
	return 0;
}

/* A dry run of the routine (from step x->skip) for marker k: sets
 * x->nmatch and x->first. Returns 0, or non-zero if the run failed. */
static int expand_dry(struct ae_regen *g, struct ae_memfn_emu *emu, uint64_t pc, uint64_t ret,
		      const struct ae_df_state *regs, const struct ae_memfn_mem *mem,
		      uint64_t limit, struct expansion *x, struct ae_smk *k)
{
	struct ae_df_state rr = *regs;
	char err[200];
	int r;

	/* a %rcx the trace does not give: no routine reads it before it
	 * writes it (none takes a fourth argument), so until then it is
	 * what the marker says (and not the 0 the emulation would hold,
	 * which no marker fits: a task switched out there was not placed) */
	if (!(rr.known & (1u << 1))) {
		rr.v[1] = k->m.cx;
		rr.known |= 1u << 1;
	}
	x->want = k;
	x->want_ip = mk_ip(g, k);
	x->dry = 1;
	x->step = 0;
	x->bytes = 0;
	x->nmatch = 0;
	r = ae_memfn_emu_run(emu, pc, ret, &rr, mem, limit, expand_insn, x, err, sizeof(err));
	x->dry = 0;
	return r;
}

/*
 * The step of the routine's run from pc (x: its state, the registers
 * *regs, memory mem) before which the next marker came, a signal, a
 * kill or a switch point at its ip in the routine; x->want is that
 * marker. UINT64_MAX: none, or it fits more than one step (a loop
 * without a register the marker carries to tell its iterations apart:
 * it is then taken after the routine, or at its entry).
 */
static uint64_t expand_target(struct ae_regen *g, struct ae_memfn_emu *emu, uint64_t pc,
			      uint64_t ret, const struct ae_df_state *regs,
			      const struct ae_memfn_mem *mem, uint64_t limit, struct expansion *x)
{
	struct ae_smk *k;

	wait_markers_here(g);
	k = next_mk(g);
	/* (mk_ip() first: it finds the marker's %rsp) */
	if (!k || !stops_at_ip(k) || !mk_ip(g, k) || !k->sp_known || k->pos < g->pos ||
	    k->pos > g->pos + 64 || !ae_program_in_memfn(g->p, k->ip))
		return UINT64_MAX;
	if (expand_dry(g, emu, pc, ret, regs, mem, limit, x, k))
		return UINT64_MAX;
	return x->nmatch != 1 ? UINT64_MAX : x->first;
}

/*
 * expand_target() on the routine's memory and on alt, the same with
 * another fill of the bytes the trace does not give (the copied ones):
 * a step is taken only if both runs find it, else a register the marker
 * carries (%rcx) holds such a byte there, whose real value may fit
 * another step, or none. UINT64_MAX: not placed.
 */
static uint64_t place_target(struct ae_regen *g, struct ae_memfn_emu *emu, uint64_t pc,
			     uint64_t ret, const struct ae_df_state *regs,
			     const struct ae_memfn_mem *mem, const struct ae_memfn_mem *alt,
			     uint64_t limit, struct expansion *x)
{
	uint64_t step = expand_target(g, emu, pc, ret, regs, mem, limit, x);

	if (step == UINT64_MAX ||
	    expand_target(g, emu, pc, ret, regs, alt, limit, x) != step)
		return UINT64_MAX;
	return step;
}

/*
 * A fault delivered at gather d (at pc), after its AE_VAL_VSIB record
 * (vsib): the CPU has loaded the element that faulted's predecessors,
 * perhaps others, and cleared their mask bits; the restart loads the
 * rest. Which were loaded the trace does not say, so only a gather whose
 * selected elements all lie on one page is exact (the fault came at the
 * first, before any load). Returns 0, or -1 after the error.
 */
static int gather_fault(struct ae_regen *g, struct ae_dinsn *d, uint64_t pc, const uint8_t *vsib)
{
	const struct ae_df_op *op = ae_decode_df(g->p, d, pc);
	struct ae_df_access a[AE_DF_VSIB_MAX];
	struct ae_smk *k;
	int miss = 0, n;
	char msg[200];

	wait_markers_here(g);
	k = next_mk(g);
	if (!op || !k || k->m.type != TRBUF_MK_SIGNAL || k->pos != g->pos || mk_ip(g, k) != pc ||
	    (k->m.arg2 != SIGSEGV && k->m.arg2 != SIGBUS))
		return 0;
	n = ae_df_vsib_accesses(op, pc, &g->ds, vsib, 0, a, &miss);
	for (int i = 0; i < n; i++) {
		if (!((a[i].addr ^ a[0].addr) >> 12) &&
		    !(((a[i].addr + a[i].size - 1) ^ a[0].addr) >> 12))
			continue;
		snprintf(msg, sizeof(msg),
			 "signal %u (a fault) at a gather whose elements lie on more than one page: which it loaded before the fault is not in the trace",
			 k->m.arg2);
		return rerr(g, pc, msg);
	}
	return 0;
}

/*
 * Is SIGNAL marker k, inside the expanded routine entered at pc, a fault
 * (SIGSEGV, SIGBUS, SIGFPE, SIGILL)? The routine stopped at an
 * instruction the emulation on accessible memory cannot find (and may
 * never return): an error (`how` says where it would have been taken).
 * Returns -1 after the error, 0 if k is no fault.
 */
static int routine_fault(struct ae_regen *g, uint64_t pc, struct ae_smk *k, const char *how)
{
	char msg[192];

	if (k->m.arg2 != SIGSEGV && k->m.arg2 != SIGBUS &&
	    k->m.arg2 != SIGFPE && k->m.arg2 != SIGILL)
		return 0;
	snprintf(msg, sizeof(msg),
		 "signal %u (a fault) inside an expanded library routine at %#llx%s: not regenerated exactly (build with aecc -fno-ae-memfn)",
		 k->m.arg2, (unsigned long long)mk_ip(g, k), how);
	return rerr(g, pc, msg);
}

/*
 * Watch w: the marker placed in an expanded call before this one (at pc,
 * run as expand_dry() does), at this offset: does it fit this call as
 * well? (Then which call it interrupted is ambiguous.)
 */
static int fits_again(struct ae_regen *g, struct ae_memfn_emu *emu, uint64_t pc, uint64_t ret,
		      const struct ae_df_state *regs, const struct ae_memfn_mem *mem,
		      const struct ae_memfn_mem *alt, uint64_t limit, struct expansion *x,
		      const struct ae_smk *w)
{
	struct ae_smk k = *w;

	k.pos = g->pos;
	/* (on either memory, alt NULL if none: which bytes the real one
	 * had is unknown) */
	return (!expand_dry(g, emu, pc, ret, regs, mem, limit, x, &k) && x->nmatch) ||
	       (alt && !expand_dry(g, emu, pc, ret, regs, alt, limit, x, &k) && x->nmatch);
}

/* The AE_EV_EXPAND event of instruction d, NULL if none. */
static const struct ae_rev *expand_event(const struct ae_dinsn *d)
{
	for (int i = 0; i < d->nev; i++)
		if (d->ev[i].kind == AE_EV_EXPAND)
			return &d->ev[i];
	return NULL;
}

/*
 * A compare's entry (AE_EV_EXPAND e at pc) reads both areas before it
 * writes its stop record: a fault delivered there, before that record,
 * is the routine's own fault at a byte the emulation cannot find.
 * Returns 0, or -1 after the error.
 */
static int cmp_entry_fault(struct ae_regen *g, const struct ae_rev *e, uint64_t pc)
{
	struct ae_smk *k;
	char msg[160];

	if (!e || !ae_memfn_is_cmp(e->a))
		return 0;
	wait_markers_here(g);
	k = next_mk(g);
	if (!k || k->m.type != TRBUF_MK_SIGNAL || k->pos != g->pos || mk_ip(g, k) != pc ||
	    (k->m.arg2 != SIGSEGV && k->m.arg2 != SIGBUS))
		return 0;
	snprintf(msg, sizeof(msg),
		 "signal %u (a fault) inside an expanded library routine (reading a compare's operands) at %#llx: not regenerated exactly (build with aecc -fno-ae-memfn)",
		 k->m.arg2, (unsigned long long)pc);
	return rerr(g, pc, msg);
}

/* Do the @n bytes at @p lie in the user address space (no wrap)? */
static int user_area(uint64_t p, uint64_t n)
{
	return p < 1ull << 47 && n <= (1ull << 47) - p;
}

/* Does routine `kind`'s %rsi point at an area (not memchr's byte, not
 * memset's missing one)? */
static int memfn_rsi_is_ptr(int kind)
{
	return kind == AE_MEMFN_MEMCPY || kind == AE_MEMFN_MEMMOVE ||
	       kind == AE_MEMFN_STPCPY || ae_memfn_is_cmp(kind);
}

/*
 * The bytes of data a routine of `kind` touches that runs over `n` bytes
 * with the arguments in regs, at least: the union of a copy's areas.
 * Past the expander's memory, the run would fail only after emulating
 * (and printing) hundreds of MiB: a corrupt size must fail before.
 */
static uint64_t expanded_bytes(int kind, const struct ae_df_state *regs, uint64_t n)
{
	uint64_t d = regs->v[7], s = regs->v[6], gap = d > s ? d - s : s - d;

	if (kind == AE_MEMFN_MEMCPY || kind == AE_MEMFN_MEMMOVE || kind == AE_MEMFN_STPCPY)
		return n + (gap < n ? gap : n);
	return n;
}

/*
 * The routine entered at pc, traced by its arguments (AE_EV_EXPAND e):
 * its argument records were read before it; read its result record,
 * emulate it (memfn.c) on memory consistent with both, and return from
 * it as its ret does: *next is the return address, %rax and %rsp come
 * from the emulation, the other caller-saved registers are unknown.
 * Returns 0 or -1.
 */
static int expand_routine(struct ae_regen *g, uint64_t pc, const struct ae_rev *e, uint64_t *next)
{
	struct ae_memfn_emu *emu = ae_program_memfn(g->p);
	struct ae_memfn_mem mem = { .fill = 1 }, alt;
	struct expansion x = { .g = g, .entry = pc, .lo = UINT64_MAX };
	uint32_t cmp_res = 0;
	uint32_t need = ae_memfn_args(e->a) | (1u << AE_DF_RSP);
	struct ae_df_state regs = g->ds;
	struct ae_smk *end;
	uint64_t res = 0, limit, ret, mi = 0, mi_res = 0, pos0 = 0, keep = 0, xentry;
	char err[200];
	int r, place;

	if (!emu)
		return rerr(g, pc, "cannot expand a library routine");
	if (g->in_emu)
		return rerr(g, pc, "a signal handler delivered amid an expanded routine's argument records calls an expanded routine: not regenerated (build with aecc -fno-ae-memfn)");
	if (!g->n)
		return rerr(g, pc, "an expanded routine entered with an empty call stack");
	/* the library's memmove calls memcpy: not the program's own (aecc
	 * refuses to link that) */
	if (e->a == AE_MEMFN_MEMMOVE && (g->p->own_memfn >> AE_MEMFN_MEMCPY & 1))
		return rerr(g, pc, "the C library's memmove would call the program's own memcpy, which an expansion cannot run");
	if ((g->ds.known & need) != need)
		return rerr(g, pc, "an expanded routine's arguments are not in the trace");
	if (cmp_entry_fault(g, e, pc))
		return -1;
	if (e->width) {
		/* its result record comes at its end: a kill before it was
		 * inside the routine */
		wait_markers_here(g);
		end = next_mk(g);
		if (end && end->pos == g->pos && end->m.type == TRBUF_MK_EXIT && stops_at_ip(end))
			return rerr(g, pc, "the task was killed inside an expanded library routine (before its result record): not regenerated exactly (build with aecc -fno-ae-memfn)");
		mi = g->mi;
		pos0 = g->pos;
		/* (the handlers consume() runs must not let go of the
		 * markers read below) */
		keep = g->mk_keep;
		if (mi < g->mk_keep)
			g->mk_keep = mi;
		xentry = g->xentry;
		g->xentry = pc;
		r = consume(g, e->width, &res, pc);
		g->xentry = xentry;
		if (r)
			return -1;
		mi_res = g->mi;
		count_plain(g, e->width);
		if (g->debug)
			fprintf(stderr, "aetrace: %sexpanded routine %u at %#llx: result %#llx at offset %llu\n",
				g->name, e->a, (unsigned long long)pc, (unsigned long long)res,
				(unsigned long long)(g->pos - e->width));
	}
	ret = g->stk[g->n - 1];
	/* plenty for the routines' loops (at most a few instructions a
	 * byte), so corrupt arguments end in an error, not a hang */
	switch (e->a) {
	case AE_MEMFN_STRLEN:
		/* nonzero bytes, the terminator at the recorded length */
		mem.nmarks = 1;
		mem.mark[0].addr = regs.v[7] + res;
		limit = res;
		break;
	case AE_MEMFN_STPCPY:
		/* the source's terminator where dest's end was returned */
		mem.nmarks = 1;
		mem.mark[0].addr = regs.v[6] + (res - regs.v[7]);
		limit = res - regs.v[7];
		break;
	case AE_MEMFN_MEMCHR:
		/* no byte equal to c, but at the returned place */
		mem.mark[0].val = (uint8_t)regs.v[6];
		mem.fill = mem.mark[0].val == 1 ? 2 : 1;
		mem.nmarks = res != 0;
		mem.mark[0].addr = res;
		/* found: the scan stopped there, whatever n (strnlen's is
		 * often SIZE_MAX) */
		limit = res ? res - regs.v[7] : regs.v[2];
		if (res && (res < regs.v[7] || res - regs.v[7] >= regs.v[2]))
			return rerr(g, pc, "corrupt trace: memchr's recorded place is outside its range");
		break;
	case AE_MEMFN_MEMCMP:
	case AE_MEMFN_STRCMP:
	case AE_MEMFN_STRNCMP:
		/* equal bytes up to the recorded stop, the recorded ones there */
		if (ae_memfn_cmp_mem(emu, e->a, regs.v[7], regs.v[6],
				     e->a == AE_MEMFN_STRCMP ? 0 : regs.v[2], res, &mem,
				     &limit, &cmp_res, err, sizeof(err)))
			return rerr(g, pc, err);
		break;
	default:
		limit = regs.v[2];
		break;
	}
	/* Only where the synthetic memory is the fill alone (no routine
	 * whose registers depend on bytes it marks: a loaded byte would
	 * tell steps apart that the real bytes do not), and alt, the other
	 * memory place_target() checks steps on, another fill (every bit
	 * flipped; for memchr, not its byte) */
	alt = mem;
	alt.fill = ~mem.fill;
	if (e->a == AE_MEMFN_MEMCHR && alt.fill == (uint8_t)regs.v[6])
		alt.fill ^= 0x80;
	place = !mem.nmarks && !ae_memfn_is_cmp(e->a);
	if (limit >= 1ull << 47)
		return rerr(g, pc, "corrupt trace: an expanded routine's size is beyond the address space");
	/* its areas (and a terminator past them) in the user address
	 * space: a corrupt length or pointer must not walk past it */
	if (!user_area(regs.v[7], limit + 1) ||
	    (memfn_rsi_is_ptr(e->a) && !user_area(regs.v[6], limit + 1)))
		return rerr(g, pc, "corrupt trace: an expanded routine's area ends beyond the user address space");
	if (expanded_bytes(e->a, &regs, limit) > AE_MEMFN_MAX_BYTES) {
		snprintf(err, sizeof(err), "a call of %llu bytes: an expanded call may touch at most %llu MiB (the expander's limit: corrupt record, or a larger call; build with aecc -fno-ae-memfn to trace it)",
			 (unsigned long long)limit, AE_MEMFN_MAX_BYTES >> 20);
		return rerr(g, pc, err);
	}
	limit = limit * 16 + 4096;
	g->st.expanded++;
	/*
	 * A signal, a kill or a switch point whose marker fits one step of
	 * the routine is taken there: the run stops before that step, the
	 * handler runs (or the task is switched out), and a new run emits
	 * the steps from it on (the emulation on the same memory repeats
	 * itself).
	 */
	/* the watch: the marker placed in a call before this one, with
	 * nothing read since its handler returned, fits this one too? */
	if (g->xw.active && g->xw.pos == g->pos &&
	    fits_again(g, emu, pc, ret, &regs, &mem, place ? &alt : NULL, limit, &x, &g->xw.k)) {
		snprintf(err, sizeof(err),
			 "marker %llu was placed in an expanded call that another one at its offset fits as well: not regenerated exactly (build with aecc -fno-ae-memfn)",
			 (unsigned long long)g->xw.k.index);
		return rerr(g, pc, err);
	}
	g->xw.active = 0;
	/* the same for a switch point, with no marker taken since: which
	 * call was switched out is ambiguous */
	if (g->xsw.active && g->xsw.pos == g->pos && (next_mk(g), g->mi == g->xsw.mi) &&
	    fits_again(g, emu, pc, ret, &regs, &mem, place ? &alt : NULL, limit, &x,
		       &g->xsw.k)) {
		g->st.switches_unplaced++;
		g->st.switches_ambiguous++;
		if (g->debug)
			fprintf(stderr, "aetrace: %sswitch point (marker %llu) placed in an expanded call fits the next one at its offset too: not placed\n",
				g->name, (unsigned long long)g->xsw.k.index);
	}
	g->xsw.active = 0;
	x.stop = UINT64_MAX;
	for (;;) {
		struct ae_df_state rr = regs;

		/* (for calls small enough to run four times per signal) */
		x.stop = place && limit <= (16ull << 20) ?
			 place_target(g, emu, pc, ret, &regs, &mem, &alt, limit, &x) : UINT64_MAX;
		x.step = 0;
		g->in_emu = 1;
		r = ae_memfn_emu_run(emu, pc, ret, &rr, &mem, limit, expand_insn, &x, err, sizeof(err));
		g->in_emu = 0;
		if (r < 0)
			return rerr(g, pc, err);
		if (r != X_STOP || x.err) {
			if (r || x.err)
				return -1;
			regs = rr;
			break;
		}
		if (is_switch(x.want)) {
			/* switched out before that step */
			g->xsw.k = *x.want;
			place_switch(g, x.want_ip, 0);
			g->xsw.pos = g->pos;
			g->xsw.mi = g->mi;
			g->xsw.active = 1;
			x.skip = x.stop;
			continue;
		}
		g->st.expanded_signals++;
		if (g->debug)
			fprintf(stderr, "aetrace: %s%s at step %llu of the expanded routine at %#llx\n",
				g->name, x.want->m.type == TRBUF_MK_EXIT ? "kill" : "signal",
				(unsigned long long)x.stop, (unsigned long long)x.want_ip);
		if (x.want->m.type == TRBUF_MK_EXIT)
			return end_at(g, x.want);
		/* its SIGRETURN must give back the %rcx the step had */
		g->rep_cut = 1;
		g->xw.k = *x.want;
		if (deliver(g) || g->stop)
			return -1;
		g->xw.pos = g->pos;
		g->xw.active = 1;
		x.skip = x.stop;
	}
	if (ae_memfn_is_cmp(e->a) ? (uint32_t)regs.v[0] != cmp_res : e->width && regs.v[0] != res)
		return rerr(g, pc, "corrupt trace: the expanded routine returned another result than recorded");
	/* signals inside a routine whose result record comes before its
	 * ret were taken at its entry, to read the result behind their
	 * handlers' bytes: not placed */
	for (; mi < mi_res; mi++) {
		struct ae_smk *k = mk(g, mi);

		if (!k || k->m.type != TRBUF_MK_SIGNAL || k->pos != pos0 ||
		    mk_ip(g, k) < x.lo || mk_ip(g, k) > x.hi)
			continue;
		/* a fault there came after instructions emitted after it */
		if (routine_fault(g, pc, k, ", taken at its entry"))
			return -1;
		g->st.expanded_late++;
	}
	if (e->width)
		g->mk_keep = keep;
	/*
	 * A signal that interrupted the routine (its bytes come next, its ip
	 * lies among the routine's instructions) runs before the return:
	 * after all of the routine's instructions, not amid them (the
	 * emulator cannot be re-entered from its hook).
	 */
	wait_markers_here(g);
	for (;;) {
		struct ae_smk *k = next_mk(g);
		uint64_t ip;

		if (!k || !stops_at_ip(k) || k->pos != g->pos)
			break;
		ip = mk_ip(g, k);
		if (ip < x.lo || ip > x.hi)
			break;
		if (is_switch(k)) {
			/* its instructions are emitted already */
			switch_here(g, 0);
			continue;
		}
		if (k->m.type == TRBUF_MK_EXIT) {
			char msg[160];

			snprintf(msg, sizeof(msg),
				 "the task was killed inside an expanded library routine at %#llx: not regenerated exactly (build with aecc -fno-ae-memfn)",
				 (unsigned long long)ip);
			return rerr(g, pc, msg);
		}
		/* what it emitted past the fault never ran */
		if (routine_fault(g, pc, k, ""))
			return -1;
		if (g->debug)
			fprintf(stderr, "aetrace: %ssignal interrupted the expanded routine at %#llx\n",
				g->name, (unsigned long long)ip);
		g->st.expanded_late++;
		if (deliver(g) || g->stop)
			return -1;
	}
	/* the routine's ret */
	g->ds.known &= AE_DF_CALLEE_SAVED & ~(1u << AE_DF_RSP);
	ae_df_set(&g->ds, 0, regs.v[0], 8);
	ae_df_set(&g->ds, AE_DF_RSP, regs.v[AE_DF_RSP], 8);
	g->ds.df = 0;
	g->ds.df_known = 1;
	*next = g->stk[--g->n];
	g->st.blocks++;
	if (g->data && data_return(g, &g->fr[g->n], pc))
		return -1;
	return 0;
}

/* expand_routine(), with the signals it delivers (inside the routine, or
 * read amid its records: its result record is written before its ret,
 * memcpy's argument records inside memmove) taken without the %rsp
 * check: the body may have moved %rsp */
static int expand(struct ae_regen *g, uint64_t pc, const struct ae_rev *e, uint64_t *next)
{
	int r;

	g->expanding++;
	r = expand_routine(g, pc, e, next);
	g->expanding--;
	return r;
}

/* The instruction at pc, which runs after prev (at prev_pc). */
static inline struct ae_dinsn *decode_next(struct ae_program *p, struct ae_dinsn *prev,
					   uint64_t prev_pc, uint64_t pc)
{
	if (prev && pc == prev_pc + prev->len) {
		if (!prev->fall)
			prev->fall = ae_decode(p, pc);
		return prev->fall;
	}
	if (prev && pc == prev->target && prev->kind != AE_K_PLAIN) {
		if (!prev->jump)
			prev->jump = ae_decode(p, pc);
		return prev->jump;
	}
	return ae_decode(p, pc);
}

/* Checkpoints (struct replay) at least this many trace bytes apart: what
 * a child forked inside a handler may replay, and its parent's stream
 * keeps. */
#define CK_BYTES	(64u << 10)

static void checkpoint(struct ae_regen *g, uint64_t pc);

static int run_loop(struct ae_regen *g, uint64_t pc)
{
	struct ae_dinsn *d = NULL;
	uint64_t d_pc = 0;

	while (!g->stop) {
		struct insn_vals iv = { 0 };
		uint64_t next, at;
		uint32_t at_gen;
		int r, skip;

		d = decode_next(g->p, d, d_pc, pc);
		d_pc = pc;
		if (!d)
			return rerr(g, pc, "execution left the twin's code");
		/* most instructions: no byte to read, no marker to take, no
		 * call's records to skip (what the steps below do for them) */
		if (!d->nev && d->kind == AE_K_PLAIN && !d->enters_kernel && !g->args_at_call &&
		    !g->vw.active && !g->sww.active && no_marker_here(g)) {
			if (emit(g, pc, d->len) || (g->data && data_exec(g, d, pc, NULL)))
				return g->stop ? 0 : -1;
			if (!g->data)
				sp_step(g, d, pc);
			pc += d->len;
			continue;
		}
		if (g->ops.fork && !g->level && !g->expanding && !g->in_emu && !g->xentry &&
		    (!g->rp || g->rp->done) && !(g->vc && g->vc->nvfork) &&
		    (!g->ck || g->ck_vfork || g->pos - g->ck->pos >= g->ck_bytes))
			checkpoint(g, pc);
		if (cmp_entry_fault(g, expand_event(d), pc))
			return -1;
		r = at_insn(g, pc, 1);
		if (r < 0)
			return g->stop ? 0 : -1;
		if (r > 0 || (d->enters_kernel &&
			      switched_in_call(g, pc, pc + d->len, writes_bytes(d, 1))))
			continue;
		skip = g->args_at_call;
		g->args_at_call = 0;
		/* the program's own routine of that name, which aecc's link
		 * points the label at: an ordinary entry, records included */
		if (skip && !expand_event(d) && (g->p->own_memfn >> skip & 1))
			skip = 0;
		at = g->pos;
		at_gen = g->sgen;
		if (records_before(g, d, pc, &iv, skip))
			return g->stop ? 0 : -1;
		if (iv.expand) {
			if (expand(g, pc, iv.expand, &next))
				return g->stop ? 0 : -1;
			pc = next;
			continue;
		}
		if (iv.vsib && gather_fault(g, d, pc, iv.vsib))
			return g->stop ? 0 : -1;
		/* (a rep instruction's are taken amid its iterations; a system
		 * call's switch points after its records too) */
		r = 0;
		while ((g->pos != at || g->sgen != at_gen) && !iv.have_rep &&
		       ((r = after_records(g, pc)) > 0 ||
			(!r && d->enters_kernel &&
			 switched_in_call(g, pc, pc + d->len, writes_bytes(d, 1)))))
			;
		if (r < 0)
			return g->stop ? 0 : -1;
		if (execute(g, d, pc, &iv))
			return g->stop ? 0 : -1;
		next = pc + d->len;
		switch (d->kind) {
		case AE_K_PLAIN:
			break;
		case AE_K_STOP:
			return rerr(g, pc, "reached a trapping instruction (ud2/hlt)");
		case AE_K_SYSCALL:
			g->sys = d;	/* a child forked here reads its records */
			g->sys_pc = pc;
			/* switched out in it: before what it did (a fork, an
			 * exec, its end), whose markers came later */
			switch_after(g, next, writes_bytes(d, 1));
			r = after_syscall(g, pc, next);
			if (r)
				return r > 0 || g->stop ? 0 : -1;
			break;
		case AE_K_JCC:
			if (cond_branch(g, d, pc, &next))
				return g->stop ? 0 : -1;
			pc = next;
			continue;
		case AE_K_JMP:
			next = d->target;
			g->st.blocks++;
			break;
		case AE_K_CALL:
			if (push(g, next, 1))
				return -1;
			g->args_at_call = iv.args_at_call;
			next = d->target;
			g->st.blocks++;
			break;
		case AE_K_JMP_IND:
		case AE_K_CALL_IND:
			if (indirect(g, d, pc, &iv, &next))
				return g->stop ? 0 : -1;
			break;
		case AE_K_RET:
			if (!g->n)
				return rerr(g, pc, "return with an empty call stack");
			next = g->stk[--g->n];
			g->st.blocks++;
			if (g->data && data_return(g, &g->fr[g->n], pc))
				return g->stop ? 0 : -1;
			if (!g->data)
				sp_return(g, d, pc, &g->fr[g->n]);
			break;
		}
		/* switched out right after it (in a system call, or before
		 * the bytes it writes after it): the end or a signal to come
		 * at this offset came later */
		switch_after(g, next, 0);
		/* fall-through witness of a non-branch, then its records
		 * (none if it was killed before them: at_insn() stops next) */
		if ((d->kind == AE_K_PLAIN || d->kind == AE_K_SYSCALL) && killed_before(g, next)) {
			/* in those bytes, if it writes any (else perhaps
			 * in a later edge's, at_insn() waits) */
			for (int i = 0; i < d->nev; i++)
				if (d->ev[i].kind == AE_EV_WIT_FALL || d->ev[i].kind == AE_EV_VAL_AFTER)
					g->kill_edge = next;
		} else if (d->kind == AE_K_PLAIN || d->kind == AE_K_SYSCALL) {
			for (int i = 0; i < d->nev && !iv.fall_read; i++)
				if (d->ev[i].kind == AE_EV_WIT_FALL &&
				    witness(g, &d->ev[i], pc))
					return g->stop ? 0 : -1;
			if (!(d->kind == AE_K_SYSCALL && ended_here(g)) && data_after(g, d, pc))
				return g->stop ? 0 : -1;
		}
		pc = next;
	}
	return 0;
}

struct ae_regen *ae_regen_new(struct ae_program *p, struct ae_tstream *s,
			      const struct ae_regen_sink *sink,
			      const struct ae_regen_ops *ops)
{
	struct ae_regen *g = calloc(1, sizeof(*g));
	const char *env;

	if (!g)
		return NULL;
	g->p = p;
	g->s = s;
	g->sink = sink;
	if (ops)
		g->ops = *ops;
	g->pos = s->base;
	g->mi = s->mk_base;
	g->mk_keep = UINT64_MAX;
	g->debug = getenv("AETRACE_DEBUG") != NULL;
	s->eager = g->debug;
	/* (tests set it small: a checkpoint at nearly every instruction) */
	env = getenv("AETRACE_CHECKPOINT_BYTES");
	g->ck_bytes = env && *env ? strtoull(env, NULL, 0) : CK_BYTES;
	/* a data-traced program's register records must be read even when
	 * only instructions are wanted (calls' records come at returns) */
	g->data = p->data_objs > 0;
	g->ds.df_known = 1;	/* clear at process entry (ABI) */
	return g;
}

/* Child g's value cache (ae_regen_clone()), into *vcp. Returns 0 or -1. */
static int vc_fork(struct vcache **vcp, const struct ae_regen *g, struct ae_regen *o,
		   uint64_t flags)
{
	struct vcache *vc;
	int err = 0;

	if (!o->vc || (flags & CLONE_SETTLS))
		return 0;	/* all zero, or the new TLS musl zeroed */
	if (!(flags & CLONE_VM)) {
		*vcp = vc_copy(o->vc, &err);
		if (*vcp && vc_pending(o->vc, o))
			(*vcp)->unknown = "copied before its parent's vfork child's trace ended";
		return err ? -1 : 0;
	}
	vc = *vcp = o->vc;
	vc->refs++;
	if ((flags & CLONE_VFORK) && vc->nvfork < VC_VFORKS)
		vc->vfork[vc->nvfork++] = g;
	else
		vc->unknown = "shared by tasks that ran at once: a clone with CLONE_VM and neither CLONE_SETTLS nor CLONE_VFORK";
	return 0;
}

/* A copy of g's state (a checkpoint's, a replay's), its value cache
 * private. NULL: no memory. */
static struct ae_regen *regen_copy(const struct ae_regen *o)
{
	struct ae_regen *g = malloc(sizeof(*g));
	int err = 0;

	if (!g)
		return NULL;
	*g = *o;
	g->ck = NULL;
	g->rp = NULL;
	g->vfs = NULL;
	g->nvfs = 0;
	g->nrec = 0;
	g->cap = o->n ? o->n : 1;
	g->capsj = o->nsj ? o->nsj : 1;
	g->stk = malloc(g->cap * sizeof(*g->stk));
	g->fr = malloc(g->cap * sizeof(*g->fr));
	g->sj = malloc(g->capsj * sizeof(*g->sj));
	g->vc = vc_copy(o->vc, &err);
	if (!g->stk || !g->fr || !g->sj || err) {
		ae_regen_free(g);
		return NULL;
	}
	/* (no copy from a NULL of an empty array: undefined) */
	if (o->n) {
		memcpy(g->stk, o->stk, o->n * sizeof(*g->stk));
		memcpy(g->fr, o->fr, o->n * sizeof(*g->fr));
	}
	if (o->nsj)
		memcpy(g->sj, o->sj, o->nsj * sizeof(*g->sj));
	return g;
}

/* A checkpoint at the top of a run_loop() iteration at pc, level 0: the
 * stream keeps what comes after it (struct replay). Without memory, the
 * last one stays. */
static void replay_free(struct ae_regen *g, struct replay *rp);

static void checkpoint(struct ae_regen *g, uint64_t pc)
{
	struct ae_regen *c = regen_copy(g);

	if (!c)
		return;
	/* a child forked inside a handler, back at level 0: the handlers it
	 * inherited are gone, and so is its need of the replay's copies (a
	 * child it forks replays from here) */
	replay_free(g, g->rp);
	g->rp = NULL;
	vfs_free(g->vfs, g->nvfs);	/* (in the checkpoint's cache) */
	g->vfs = NULL;
	g->nvfs = 0;
	ae_regen_free(g->ck);
	g->ck = c;
	g->ck_pc = pc;
	g->ck_vfork = 0;
	g->ck_missed = 0;
	for (unsigned int i = 0; i < 64; i++) {
		struct ae_smk *k = mk(g, g->mi + i);

		if (!k || k->pos != g->pos)
			break;
		g->ck_missed |= (uint64_t)!!k->sp_missed << i;
	}
	g->s->pinned = 1;
	g->s->pin_pos = g->pos;
	g->s->pin_mi = g->mi;
}

static int vc_equal(const struct vcache *a, const struct vcache *b)
{
	static const struct vcache zero;

	a = a ? a : &zero;
	b = b ? b : &zero;
	return !memcmp(a->v, b->v, sizeof(a->v)) && !memcmp(a->lc, b->lc, sizeof(a->lc));
}

static int ds_equal(const struct ae_df_state *a, const struct ae_df_state *b)
{
	if (a->known != b->known || a->fs_known != b->fs_known || a->df_known != b->df_known ||
	    (a->fs_known && a->fs != b->fs) || (a->df_known && a->df != b->df) ||
	    ((a->known & (AE_DF_K_FLAGS | AE_DF_K_CARRY)) && a->fl != b->fl))
		return 0;
	for (int r = 0; r < 16; r++)
		if ((a->known & (1u << r)) && a->v[r] != b->v[r])
			return 0;
	return 1;
}

/* The replay wants bytes a task had not read when it forked. */
static void replay_wait(void *ctx)
{
	struct ae_regen *g = ctx;

	if (!g->rp->starved)
		fprintf(stderr, "aetrace: %sreplaying its parent's trace to the fork inside a signal handler, it wanted more than the parent had read\n",
			g->name);
	g->rp->starved = 1;
	g->rp->st[g->rp->cur].s.final = 1;
}

static void stage_free(struct stage *st)
{
	vfs_free(st->vfs, st->nvfs);
	ae_tstream_free(&st->s);
	free(st->stk);
	free(st->pvc);
}

/*
 * The replay took a FORK marker: at the one its stage ends at, check that
 * it reached it as the task did, and become that task's child: its value
 * cache, its stream from the start (the next stage's, or at the last its
 * own, with its sink and feeder). Returns 0 or -1.
 */
static int replay_fork(void *ctx, struct ae_regen *g, const struct trbuf_marker *m, uint64_t pc)
{
	struct replay *rp = g->rp;
	struct stage *st = &rp->st[rp->cur];
	int last = rp->cur == rp->nst - 1;
	uint64_t base = st->s.base;
	const char *what = NULL;

	(void)ctx;
	(void)m;
	if (g->mi - 1 != st->fork_mi)
		return 0;	/* another fork before it */
	if (g->level != st->level)
		what = "the signal handlers it is in";
	else if (g->pos != st->pos)
		what = "the trace offset";
	else if (g->n != st->n || memcmp(g->stk, st->stk, g->n * sizeof(*g->stk)))
		what = "the call stack";
	else if (g->data && !ds_equal(&g->ds, &st->ds))
		what = "the registers";
	else if (!vc_equal(g->vc, st->pvc))
		what = "the value cache";
	if (what) {
		char msg[200];

		snprintf(msg, sizeof(msg),
			 "forked inside a signal handler: replaying its parent's trace from offset %llu to the fork, %s differed from the parent's",
			 (unsigned long long)st->s.base, what);
		return rerr(g, pc, msg);
	}
	/* (in the chain, the task's own copy goes on: a fork's child
	 * copies its parent's cache, and no stage has CLONE_VM) */
	if (last) {
		vc_put(g);
		g->vc = rp->vc;
		rp->vc = NULL;
	}
	/* as ae_regen_clone(): the system call's record gives %rsp */
	g->ds.known &= ~(1u << AE_DF_RSP);
	if (last) {
		uint64_t kept = 0;

		g->s = rp->s_child;
		g->sink = rp->sink;
		g->ops = rp->ops;
		g->s->eager = g->debug;
		rp->inh = g->level;
		rp->done = 1;
		/* kept until its first checkpoint, as its own stream from the
		 * start: a child it forks in this handler replays them (a
		 * chain), unless they are large (many children forked late
		 * in a long handler would each keep that much) */
		for (int i = 0; i < rp->nst; i++)
			kept += rp->st[i].s.end - rp->st[i].s.base;
		if (kept > CHAIN_KEEP) {
			for (int i = 0; i < rp->nst; i++)
				stage_free(&rp->st[i]);
			rp->nst = 0;
			rp->nochain = 1;
		} else {
			rp->own_base = g->s->base;
			rp->own_mbase = g->s->mk_base;
			g->s->pinned = 1;
			g->s->pin_pos = rp->own_base;
			g->s->pin_mi = rp->own_mbase;
		}
	} else {
		g->s = &rp->st[++rp->cur].s;
	}
	g->pos = g->s->base;
	g->mi = g->s->mk_base;
	g->sgen++;	/* (an offset of the stream it left is no offset here) */
	memset(&g->st, 0, sizeof(g->st));
	g->sw_taken = 0;
	g->mk_keep = UINT64_MAX;
	g->vw.active = g->sww.active = g->xw.active = g->xsw.active = 0;
	g->kill_edge = g->kill_skip = 0;
	g->vf_mi = 0;	/* (an index in the stream it leaves) */
	g->nrec = 0;
	g->stop = g->finishing = g->sink_stop = 0;
	if (g->debug)
		fprintf(stderr, "aetrace: %sreplayed its %sparent from offset %llu to the fork at level %d%s\n",
			g->name, last ? "" : "grand", (unsigned long long)base, g->level,
			last ? ": its own trace from here" : "");
	return 0;
}

static void replay_free(struct ae_regen *g, struct replay *rp)
{
	if (!rp)
		return;
	for (int i = 0; i < rp->nst; i++)
		stage_free(&rp->st[i]);
	free(rp->st);
	ae_regen_free(rp->start);
	vc_unref(rp->vc, g);
	free(rp);
}

/* A copy of stream ps into st from byte base and marker mbase on, the
 * markers as they were when the replay enters it (none taken; those at
 * base reached with another %rsp: bits of missed), kept whole. Returns 0
 * or -1 (no memory). */
static int stage_stream(struct stage *st, const struct ae_tstream *ps, uint64_t base,
			uint64_t mbase, uint64_t missed)
{
	size_t nmk = ps->mk_base + ps->nmk - mbase;
	struct ae_tstream *s = &st->s;

	if (ae_tstream_append(s, ps->buf + (base - ps->base), ps->end - base))
		return -1;
	s->mk = malloc((nmk ? nmk : 1) * sizeof(*s->mk));
	if (!s->mk)
		return -1;
	memcpy(s->mk, ps->mk + (mbase - ps->mk_base), nmk * sizeof(*s->mk));
	for (size_t i = 0; i < nmk; i++) {
		s->mk[i].taken = 0;
		s->mk[i].sp_missed = i < 64 && (missed >> i & 1);
	}
	s->nmk = s->capmk = nmk;
	s->base = base;
	s->end = ps->end;
	s->mk_base = mbase;
	s->nswitch = ps->nswitch;
	s->nmoot = ps->nmoot;
	s->final = ps->final;
	s->eager = ps->eager;
	s->pinned = 1;
	s->pin_pos = base;
	s->pin_mi = mbase;
	st->missed = missed;
	return 0;
}

/* What st's task was at its fork: a copy of src's, or (src NULL) task o's
 * at the FORK marker it just took, with clone flags. Returns 0 or -1. */
static int stage_fork(struct stage *st, const struct stage *src, const struct ae_regen *o,
		      uint64_t flags)
{
	int err = 0;

	if (src) {
		st->fork_mi = src->fork_mi;
		st->flags = src->flags;
		st->pos = src->pos;
		st->level = src->level;
		st->n = src->n;
		st->ds = src->ds;
	} else {
		st->fork_mi = o->mi - 1;
		st->flags = flags;
		st->pos = o->pos;
		st->level = o->level;
		st->n = o->n;
		st->ds = o->ds;
	}
	st->stk = malloc((st->n ? st->n : 1) * sizeof(*st->stk));
	st->pvc = vc_copy(src ? src->pvc : o->vc, &err);
	if (!st->stk || err || vfs_copy(&st->vfs, &st->nvfs, src ? src->vfs : o->vfs,
					  src ? src->nvfs : o->nvfs))
		return -1;
	memcpy(st->stk, src ? src->stk : o->stk, st->n * sizeof(*st->stk));
	return 0;
}

struct ae_regen *ae_regen_clone_replay(struct ae_regen *o, struct ae_tstream *s,
				       const struct ae_regen_sink *sink,
				       const struct ae_regen_ops *ops, uint64_t clone_flags,
				       uint64_t *pc, const char **why)
{
	static const struct ae_regen_sink none;
	const struct ae_tstream *ps = o->s;
	const struct replay *orp = o->ck ? NULL : o->rp;	/* a chain's */
	uint64_t base, mbase;
	struct ae_regen *g;
	struct replay *rp;
	struct stage *st;
	int n;

	*why = "out of memory";
	if (clone_flags & CLONE_VM) {
		/* (it never returns from the handlers: ae_regen_clone()) */
		*why = "a child that shares its parent's memory is not replayed (internal error)";
		return NULL;
	}
	if (!o->ck && !(orp && orp->done)) {
		*why = "no checkpoint of the parent's state before the handler to replay from: not supported";
		return NULL;
	}
	base = orp ? orp->own_base : o->ck->pos;
	mbase = orp ? orp->own_mbase : o->ck->mi;
	if (orp && orp->nochain) {
		*why = "its parent, forked inside a handler too and not back at level 0 since, let go of its replay (more than " CHAIN_KEEP_TEXT " of trace): not supported";
		return NULL;
	}
	if (base < ps->base || mbase < ps->mk_base || mbase > ps->mk_base + ps->nmk) {
		*why = "its parent's trace since its last checkpoint was not kept (a stream keeps at most " AE_TSTREAM_PIN_MAX_TEXT " past one): not supported";
		return NULL;
	}
	for (int i = 0; orp && i < orp->nst; i++)
		if (orp->st[i].s.base != orp->st[i].s.pin_pos || !orp->st[i].s.pinned) {
			*why = "its parent's replay was not kept whole (more than " AE_TSTREAM_PIN_MAX_TEXT " of trace): not supported";
			return NULL;
		}
	n = orp ? orp->nst + 1 : 1;
	rp = calloc(1, sizeof(*rp));
	if (!rp)
		return NULL;
	rp->st = calloc(n, sizeof(*rp->st));
	rp->start = regen_copy(orp ? orp->start : o->ck);
	g = rp->start ? regen_copy(rp->start) : NULL;
	if (!rp->st || !g) {
		replay_free(NULL, rp);
		ae_regen_free(g);
		return NULL;
	}
	g->rp = rp;
	rp->start_pc = orp ? orp->start_pc : o->ck_pc;
	rp->s_child = s;
	rp->sink = sink;
	rp->ops = *ops;
	for (int i = 0; i < n - 1; i++) {
		const struct stage *src = &orp->st[i];

		rp->nst++;
		if (stage_stream(&rp->st[i], &src->s, src->s.base, src->s.mk_base, src->missed) ||
		    stage_fork(&rp->st[i], src, NULL, 0)) {
			ae_regen_free(g);
			return NULL;
		}
	}
	st = &rp->st[rp->nst++];
	/* (a cache shared with a vfork child makes the parent wait for it:
	 * the replay and the child are the same task) */
	if (stage_stream(st, ps, base, mbase, orp ? 0 : o->ck_missed) ||
	    stage_fork(st, NULL, o, clone_flags) || vc_fork(&rp->vc, g, o, clone_flags)) {
		ae_regen_free(g);
		return NULL;
	}
	g->s = &rp->st[0].s;
	g->sink = &none;
	g->ops = (struct ae_regen_ops){ .wait = replay_wait, .fork = replay_fork, .ctx = g };
	g->pos = g->s->base;
	g->mi = g->s->mk_base;
	*pc = rp->start_pc;
	*why = NULL;
	return g;
}

struct ae_regen *ae_regen_clone(struct ae_regen *o, struct ae_tstream *s,
				const struct ae_regen_sink *sink,
				const struct ae_regen_ops *ops, uint64_t clone_flags)
{
	struct ae_regen *g = ae_regen_new(o->p, s, sink, ops);

	if (!g)
		return NULL;
	if ((clone_flags & CLONE_VM) && !(clone_flags & CLONE_SETTLS) && !vc_get(o)) {
		ae_regen_free(g);
		return NULL;
	}
	if (vc_fork(&g->vc, g, o, clone_flags)) {
		ae_regen_free(g);
		return NULL;
	}
	g->loaded_target = o->loaded_target;
	g->stk = malloc((o->n + 1) * sizeof(*g->stk));
	g->sj = malloc((o->nsj + 1) * sizeof(*g->sj));
	if (!g->stk || !g->sj) {
		ae_regen_free(g);
		return NULL;
	}
	if (o->n)
		memcpy(g->stk, o->stk, o->n * sizeof(*g->stk));
	g->fr = malloc((o->n + 1) * sizeof(*g->fr));
	if (!g->fr) {
		ae_regen_free(g);
		return NULL;
	}
	if (o->n)
		memcpy(g->fr, o->fr, o->n * sizeof(*g->fr));
	/* a new thread runs on another stack: the system call's record of
	 * %rsp (data.c) gives it; its parent's frames are not on it */
	g->ds = o->ds;
	g->ds.known &= ~(1u << AE_DF_RSP);
	if ((clone_flags & CLONE_VM) && !(clone_flags & CLONE_VFORK))
		for (size_t i = 0; i < o->n; i++)
			g->fr[i].ds.known &= ~SP_REGS;
	if (g->data) {
		g->sys = o->sys;
		g->sys_pc = o->sys_pc;
		g->child_records = 1;
	}
	g->n = g->cap = o->n;
	if (!g->cap) {
		g->cap = 1;
	}
	if (o->nsj)
		memcpy(g->sj, o->sj, o->nsj * sizeof(*g->sj));
	g->nsj = g->capsj = o->nsj;
	if (!g->capsj)
		g->capsj = 1;
	return g;
}

void ae_regen_free(struct ae_regen *g)
{
	if (!g)
		return;
	ae_regen_free(g->ck);
	replay_free(g, g->rp);
	vfs_free(g->vfs, g->nvfs);
	vc_put(g);
	free(g->stk);
	free(g->fr);
	free(g->sj);
	free(g);
}

void ae_regen_set_name(struct ae_regen *g, const char *name)
{
	snprintf(g->name, sizeof(g->name), "%s", name);
}

const struct ae_regen_stats *ae_regen_stats(const struct ae_regen *g)
{
	static const struct ae_regen_stats none;

	/* (a child still replaying its parent has run nothing of its own) */
	return g->rp && !g->rp->done ? &none : &g->st;
}

uint64_t ae_regen_pos(const struct ae_regen *g)
{
	return g->pos;
}

void ae_regen_set_sp(struct ae_regen *g, uint64_t sp)
{
	ae_df_set(&g->ds, AE_DF_RSP, sp, 8);
}

int ae_regen_level(const struct ae_regen *g)
{
	return g->level;
}

static int regen_run(struct ae_regen *g, uint64_t pc);

int ae_regen_run(struct ae_regen *g, uint64_t pc)
{
	int ret = regen_run(g, pc);

	/* the last records go before anything another task writes next */
	if (sink_flush(g) && ret >= 0)
		ret = AE_END_STOPPED;
	/* a vfork child's trace ends here: its parent may go on (also one
	 * whose replay of its parent never reached the fork) */
	vc_vfork_done(g, ret);
	if (g->rp && g->rp->vc)
		vc_vfork_release(g->rp->vc, g, ret);
	/* no fork to come: no checkpoint kept */
	g->s->pinned = 0;
	ae_regen_free(g->ck);
	g->ck = NULL;
	return ret;
}

static int regen_run(struct ae_regen *g, uint64_t pc)
{
	int ret;

	/* the child of a fork or clone resumes after the system call: its
	 * fall-through witness and records come first in the child's stream */
	if (g->child_records && g->sys) {
		g->child_records = 0;
		for (int i = 0; i < g->sys->nev; i++)
			if (g->sys->ev[i].kind == AE_EV_WIT_FALL &&
			    witness(g, &g->sys->ev[i], g->sys_pc))
				return g->stop ? g->stop : -1;
		if (data_after(g, g->sys, g->sys_pc))
			return g->stop ? g->stop : -1;
	}
	ret = run(g, pc);

	g->st.blocks += g->st.insns ? 1 : 0;
	if (g->stop == AE_END_STOPPED || g->stop == AE_END_CAPTURE)
		return g->stop;
	if (ret < 0)
		return -1;
	if (!g->stop)
		return rerr(g, 0, "regeneration ended early");
	/* the end: every byte of the task must be consumed */
	while (!g->s->final && g->ops.wait)
		ops_wait(g);
	if (g->pos != g->s->end) {
		char msg[96];

		snprintf(msg, sizeof(msg), "%llu trace bytes left unread at the program's %s",
			 (unsigned long long)(g->s->end - g->pos),
			 g->stop == AE_END_EXEC ? "exec" : "exit");
		return rerr(g, 0, msg);
	}
	return g->stop;
}
