// SPDX-License-Identifier: MIT
/*
 * marker.c - read schedule markers from sched.bin (raw records) or from a
 * trace's MARKERS chunks, and print them readably.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <aetrace/container.h>
#include <aetrace/schedlog.h>

static const char *const type_names[] = {
	[TRBUF_MK_START] = "START",
	[TRBUF_MK_SWITCH_IN] = "SWITCH_IN",
	[TRBUF_MK_SWITCH_OUT] = "SWITCH_OUT",
	[TRBUF_MK_SIGNAL] = "SIGNAL",
	[TRBUF_MK_SIGRETURN] = "SIGRETURN",
	[TRBUF_MK_FORK] = "FORK",
	[TRBUF_MK_EXEC] = "EXEC",
	[TRBUF_MK_EXIT] = "EXIT",
	[TRBUF_MK_SUBBUF] = "SUBBUF",
	[TRBUF_MK_STOP] = "STOP",
	[TRBUF_MK_ROLLBACK] = "ROLLBACK",
};

const char *schedlog_type_name(uint32_t type)
{
	if (type < sizeof(type_names) / sizeof(type_names[0]) && type_names[type])
		return type_names[type];
	return "?";
}

int schedlog_format(char *buf, size_t len, uint64_t index, const struct trbuf_marker *m)
{
	char extra[96] = "";

	switch (m->type) {
	case TRBUF_MK_SIGNAL:
		snprintf(extra, sizeof(extra), " arg=%#llx sig=%u cx=%#llx", (unsigned long long)m->arg,
			 m->arg2, (unsigned long long)m->cx);
		break;
	case TRBUF_MK_SIGRETURN:
		if (m->flags & TRBUF_MKF_CTX_CHECKED)
			snprintf(extra, sizeof(extra), " changed=%#llx%s", (unsigned long long)m->arg,
				 m->flags & TRBUF_MKF_CTX_FULL ? "" :
				 m->flags & TRBUF_MKF_CTX_FLAGS ? " (registers and flags)" :
				 " (registers only)");
		break;
	case TRBUF_MK_FORK:
		snprintf(extra, sizeof(extra), " child=%llu flags=%#x", (unsigned long long)m->arg, m->arg2);
		break;
	case TRBUF_MK_EXIT:
		snprintf(extra, sizeof(extra), " code=%lld cx=%#llx", (long long)m->arg,
			 (unsigned long long)m->cx);
		break;
	case TRBUF_MK_ROLLBACK:
		snprintf(extra, sizeof(extra), " from=%#llx", (unsigned long long)m->arg);
		break;
	case TRBUF_MK_SUBBUF:
		snprintf(extra, sizeof(extra), " new_seq=%llu%s", (unsigned long long)m->arg,
			 m->arg2 ? " flush" : "");
		break;
	default:
		break;
	}
	return snprintf(buf, len, "%8llu %llu.%09llu cpu%u %d/%d %-9s %llu:%u ip=%#llx sp=%#llx%s",
			(unsigned long long)index,
			(unsigned long long)(m->time_ns / 1000000000ull),
			(unsigned long long)(m->time_ns % 1000000000ull),
			m->cpu, m->pid, m->tid, schedlog_type_name(m->type),
			(unsigned long long)m->seq, m->offset,
			(unsigned long long)m->ip, (unsigned long long)m->sp, extra);
}

struct schedlog_markers {
	const char *path;
	int cpu;
	FILE *f;			/* sched.bin */
	struct ae_reader *r;		/* or a trace */
	const struct trbuf_marker *chunk;
	size_t nchunk, ichunk;
	uint64_t index;			/* of the next marker in the file */
	char err[512];
};

int schedlog_is_container(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint32_t magic = 0;
	int ret;

	if (!f)
		return 0;
	ret = fread(&magic, 4, 1, f) == 1 && magic == 0xfd2fb528u;	/* zstd frame */
	fclose(f);
	return ret;
}

int schedlog_markers_open(struct schedlog_markers **mp, const char *path, int cpu)
{
	struct schedlog_markers *ms = calloc(1, sizeof(*ms));
	int ret;

	*mp = ms;
	if (!ms)
		return -ENOMEM;
	ms->path = path;
	ms->cpu = cpu;
	if (schedlog_is_container(path)) {
		ret = ae_reader_open(&ms->r, path);
		if (ret)
			snprintf(ms->err, sizeof(ms->err), "%s: %s", path, strerror(-ret));
		return ret;
	}
	ms->f = fopen(path, "rb");
	if (!ms->f) {
		ret = -errno;
		snprintf(ms->err, sizeof(ms->err), "%s: %s", path, strerror(errno));
		return ret;
	}
	setvbuf(ms->f, NULL, _IOFBF, 1 << 16);
	return 0;
}

static int next_any(struct schedlog_markers *ms, struct trbuf_marker *m)
{
	if (ms->f) {
		size_t n = fread(m, 1, sizeof(*m), ms->f);

		if (n == 0 && !ferror(ms->f))
			return 0;
		if (n != sizeof(*m)) {
			snprintf(ms->err, sizeof(ms->err),
				 "%s: truncated marker %llu at byte offset %llu (file size not a multiple of %zu)",
				 ms->path, (unsigned long long)ms->index,
				 (unsigned long long)ms->index * sizeof(*m), sizeof(*m));
			return -EINVAL;
		}
		return 1;
	}
	while (ms->ichunk == ms->nchunk) {
		struct ae_chunk_hdr h;
		const void *pl;
		int ret = ae_reader_next(ms->r, &h, &pl);

		if (ret < 0) {
			snprintf(ms->err, sizeof(ms->err), "%s", ae_reader_error(ms->r));
			return ret;
		}
		if (ret == 0)
			return 0;
		if (h.type != AE_CHUNK_MARKERS)
			continue;
		if (h.len % sizeof(*m)) {
			snprintf(ms->err, sizeof(ms->err),
				 "%s: MARKERS chunk of %u bytes (not a multiple of %zu) at offset %llu",
				 ms->path, h.len, sizeof(*m), (unsigned long long)ae_reader_offset(ms->r));
			return -EINVAL;
		}
		ms->chunk = pl;
		ms->nchunk = h.len / sizeof(*m);
		ms->ichunk = 0;
	}
	memcpy(m, &ms->chunk[ms->ichunk++], sizeof(*m));
	return 1;
}

int schedlog_markers_next(struct schedlog_markers *ms, struct trbuf_marker *m, uint64_t *index)
{
	for (;;) {
		int ret = next_any(ms, m);

		if (ret <= 0)
			return ret;
		*index = ms->index++;
		if (ms->cpu < 0 || m->cpu == ms->cpu)
			return 1;
	}
}

const char *schedlog_markers_error(const struct schedlog_markers *ms)
{
	return ms->err;
}

void schedlog_markers_close(struct schedlog_markers *ms)
{
	if (!ms)
		return;
	if (ms->f)
		fclose(ms->f);
	if (ms->r)
		ae_reader_close(ms->r);
	free(ms);
}
