/* SPDX-License-Identifier: MIT */
/*
 * schedlog.h - the schedule log (docs/FORMAT.md "Schedule file"): kernel
 * markers (struct trbuf_marker) read from sched.bin or from a trace's
 * MARKERS chunks, and the demultiplexer that turns a capture into
 * per-task byte streams (schedlog/, libschedlog.a).
 */
#ifndef AETRACE_SCHEDLOG_H
#define AETRACE_SCHEDLOG_H

#include <stddef.h>
#include <stdint.h>

#include <linux/trbuf.h>

/* "SWITCH_IN" etc.; "?" for an unknown type. */
const char *schedlog_type_name(uint32_t type);

/*
 * One marker as one line (no newline): index, time, cpu, pid/tid, type,
 * position (seq:offset), ip and the type's arguments. Returns the length
 * snprintf() would have written.
 */
int schedlog_format(char *buf, size_t len, uint64_t index, const struct trbuf_marker *m);

/*
 * Markers of a sched.bin file or of a trace's MARKERS chunks, in file
 * order; `cpu` >= 0 keeps only that CPU's markers. The index of a marker is
 * its position in the whole file (the same in sched.bin and the trace).
 */
struct schedlog_markers;
/* Returns 0 or -errno (message from schedlog_markers_error()). */
int schedlog_markers_open(struct schedlog_markers **mp, const char *path, int cpu);
/* Returns 1 with *m and *index filled, 0 at the end, <0 on a bad file. */
int schedlog_markers_next(struct schedlog_markers *ms, struct trbuf_marker *m, uint64_t *index);
const char *schedlog_markers_error(const struct schedlog_markers *ms);
void schedlog_markers_close(struct schedlog_markers *ms);
/* Is path a container (trace.zst) rather than a raw sched.bin? */
int schedlog_is_container(const char *path);

/*
 * Demultiplexer: one capture (trace.zst, with its markers from its
 * MARKERS chunks or from a separate sched.bin) as a sequence of events in
 * time order (CLOCK_MONOTONIC of the markers): each marker, and the bytes
 * each task wrote, handed out in the order the task wrote them. Bytes of a
 * task on one CPU are handed out before anything of its next slice on
 * another CPU. Memory: one reader per CPU, each holding at most the
 * sub-buffers between two of its markers.
 *
 * A file cut short (no END chunk) may lack a CPU's last sub-buffers, and
 * with them bytes of a task that ran there before a marker of that CPU
 * or before its switch-in elsewhere: the task's bytes are then CUT there
 * (SCHEDLOG_EV_CUT: its stream has a hole; nothing of it that follows
 * continues it). With END, such a marker is an error.
 */
enum schedlog_ev_kind {
	SCHEDLOG_EV_MARKER = 1,
	SCHEDLOG_EV_DATA = 2,
	SCHEDLOG_EV_CUT = 3,		/* pid, tid, cpu; seq, offset: where
					 * the CPU's bytes ran out */
};

struct schedlog_ev {
	int kind;
	uint16_t cpu;
	int32_t pid, tid;		/* owner of the data; marker's task */
	uint64_t index;			/* MARKER: index in the schedule file */
	const struct trbuf_marker *m;	/* MARKER */
	const uint8_t *data;		/* DATA: valid until the next call */
	size_t len;
	uint64_t seq;			/* DATA: sub-buffer; MARKER: m->seq */
	uint32_t offset;		/* DATA: offset of data[0] in seq */
					/* CUT: where the bytes ran out */
};

struct schedlog_geom {
	uint32_t mode;			/* enum ae_session_mode */
	uint32_t nr_cpus, subbuf_size, nr_subbufs;
};

struct schedlog_demux;
/* sched may be NULL: markers come from the trace's MARKERS chunks.
 * Returns 0 or -1 with a message naming the file on stderr. */
int schedlog_demux_open(struct schedlog_demux **dp, const char *trace, const char *sched);
const struct schedlog_geom *schedlog_demux_geom(const struct schedlog_demux *d);
/* Returns 1 with *ev filled, 0 at the end, -1 on an error (message on
 * stderr naming the file, the marker index or the sub-buffer). */
int schedlog_demux_next(struct schedlog_demux *d, struct schedlog_ev *ev);
/* Once schedlog_demux_next() has returned 0: what the capture's END chunk
 * says its producer lost (struct ae_end drops; 0 without an END). */
uint64_t schedlog_demux_drops(const struct schedlog_demux *d);
/* Once schedlog_demux_next() has returned 0: 1 when the capture ends in
 * its END chunk (whose counters matched the chunks), 0 when the file was
 * cut short (a producer killed, a full disk) or is still being written. */
int schedlog_demux_complete(const struct schedlog_demux *d);
void schedlog_demux_close(struct schedlog_demux *d);

#endif /* AETRACE_SCHEDLOG_H */
