// SPDX-License-Identifier: MIT
/*
 * timeline_render.c - write the slices of `aetrace timeline` (timeline.h)
 * as Chrome/Perfetto trace-event JSON (complete "X" events, pid 0, one tid
 * per CPU) or as an SVG picture (one lane per CPU, one colour per process;
 * traced slices solid and outlined, untraced ones pale and hatched).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timeline.h"

/* "comm pid/tid", or "pid/tid" when the name is unknown. */
static void slice_name(const struct ae_slice *s, char *b, size_t n)
{
	if (s->comm[0])
		snprintf(b, n, "%.16s %d/%d", s->comm, s->pid, s->tid);
	else
		snprintf(b, n, "pid %d/%d", s->pid, s->tid);
}

/* A JSON string body: comm may hold any byte. */
static void json_str(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
}

/* XML text: no control characters, markup escaped, non-ASCII as '?'. */
static void xml_str(FILE *f, const char *s, size_t max)
{
	for (; *s && max; s++, max--) {
		unsigned char c = *s;

		if (c == '&')
			fputs("&amp;", f);
		else if (c == '<')
			fputs("&lt;", f);
		else if (c == '>')
			fputs("&gt;", f);
		else if (c == '"')
			fputs("&quot;", f);
		else if (c < 0x20 || c >= 0x7f)
			fputc('?', f);
		else
			fputc(c, f);
	}
}

/* ns since t0 as microseconds with 3 decimals (exact). */
static void us(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
}

int ae_timeline_json(const struct ae_timeline *tl, FILE *f)
{
	char name[64];
	unsigned int c;
	size_t i;

	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"source\":\"", f);
	json_str(f, tl->title ? tl->title : "");
	fprintf(f, "\",\"t0_ns\":%" PRIu64 ",\"untraced_known\":%s},\n\"traceEvents\":[\n",
		tl->t0, tl->have_bpf ? "true" : "false");
	fputs("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"tid\":0,\"args\":{\"name\":\"CPUs\"}}", f);
	for (c = 0; c < tl->nr_cpus; c++) {
		fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":%u,\"args\":{\"name\":\"CPU %u\"}}",
			c, c);
		fprintf(f, ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":0,\"tid\":%u,\"args\":{\"sort_index\":%u}}",
			c, c);
	}
	for (i = 0; i < tl->n; i++) {
		const struct ae_slice *s = &tl->s[i];

		slice_name(s, name, sizeof(name));
		fputs(",\n{\"name\":\"", f);
		json_str(f, name);
		fprintf(f, "\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":0,\"tid\":%u,\"ts\":",
			s->traced ? "traced" : "untraced", s->cpu);
		us(f, s->start - tl->t0);
		fputs(",\"dur\":", f);
		us(f, s->end - s->start);
		fprintf(f, ",\"args\":{\"pid\":%d,\"tid\":%d,\"comm\":\"", s->pid, s->tid);
		json_str(f, s->comm);
		fprintf(f, "\",\"traced\":%s", s->traced ? "true" : "false");
		if (s->insns)
			fprintf(f, ",\"instructions\":%" PRIu64, s->insns);
		fputs("}}", f);
	}
	fputs("\n]}\n", f);
	return ferror(f) ? -EIO : 0;
}

/* One colour per process: golden-angle hues. */
static unsigned int hue(int32_t pid)
{
	return (unsigned int)(((uint32_t)pid * 137.508)) % 360;
}

#define SVG_W		1400
#define SVG_LEFT	70
#define SVG_RIGHT	20
#define SVG_TOP		40
#define LANE_H		32
#define LANE_GAP	8
#define CHAR_W		6.6

static int cmp_pid(const void *a, const void *b)
{
	const struct ae_slice *x = *(const struct ae_slice * const *)a;
	const struct ae_slice *y = *(const struct ae_slice * const *)b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Nice tick step (1, 2, 5 x 10^k ns) for about 10 ticks over span. */
static uint64_t tick_step(uint64_t span)
{
	uint64_t step = 1;

	/* (a span near 2^64, from a hostile time, must not wrap step * 50) */
	while (step * 10 < span && step <= UINT64_MAX / 100) {
		if (step * 2 * 10 >= span)
			return step * 2;
		if (step * 5 * 10 >= span)
			return step * 5;
		step *= 10;
	}
	return step;
}

static void fmt_time(char *b, size_t n, uint64_t ns)
{
	if (ns >= 1000000000ull)
		snprintf(b, n, "%.3g s", ns / 1e9);
	else if (ns >= 1000000)
		snprintf(b, n, "%.3g ms", ns / 1e6);
	else if (ns >= 1000)
		snprintf(b, n, "%.3g us", ns / 1e3);
	else
		snprintf(b, n, "%" PRIu64 " ns", ns);
}

int ae_timeline_svg(const struct ae_timeline *tl, FILE *f)
{
	uint64_t span = tl->t1 > tl->t0 ? tl->t1 - tl->t0 : 1, step, t;
	double plot_w = SVG_W - SVG_LEFT - SVG_RIGHT, scale = plot_w / (double)span;
	double lanes_h = tl->nr_cpus * (LANE_H + LANE_GAP);
	const struct ae_slice **by_pid = malloc((tl->n ? tl->n : 1) * sizeof(*by_pid));
	size_t i, nproc = 0, shown = 0;
	unsigned int c, legend_rows;
	char name[64], tb[32];
	double height, y;

	if (!by_pid)
		return -ENOMEM;
	for (i = 0; i < tl->n; i++)
		by_pid[i] = &tl->s[i];
	qsort(by_pid, tl->n, sizeof(*by_pid), cmp_pid);
	for (i = 0; i < tl->n; i++)
		if (!i || by_pid[i]->pid != by_pid[i - 1]->pid)
			nproc++;
	legend_rows = (nproc < 60 ? nproc : 60) / 4 + 2;
	height = SVG_TOP + lanes_h + 40 + legend_rows * 18 + 10;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" font-family=\"sans-serif\" font-size=\"11\">\n",
		SVG_W, height, SVG_W, height);
	fputs("<title>aetrace timeline: ", f);
	xml_str(f, tl->title ? tl->title : "", 200);
	fputs("</title>\n<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
	      "<rect width=\"6\" height=\"6\" fill=\"white\" fill-opacity=\"0.55\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#888\" stroke-width=\"1.5\"/></pattern></defs>\n"
	      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n", f);
	fmt_time(tb, sizeof(tb), span);
	fprintf(f, "<text x=\"%d\" y=\"16\" font-size=\"13\">aetrace timeline (%zu slices, %s%s)</text>\n",
		SVG_LEFT, tl->n, tb, tl->have_bpf ? "" : "; markers only: untraced tasks unknown, slices end at the next traced switch-in");

	/* axis */
	step = tick_step(span);
	for (t = 0;; t += step) {
		double x = SVG_LEFT + t * scale;

		fmt_time(tb, sizeof(tb), t);
		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#ddd\"/>"
			"<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">%s</text>\n",
			x, SVG_TOP - 6, x, SVG_TOP + lanes_h, x, SVG_TOP - 9, tb);
		if (span - t < step)	/* (t + step would pass span, or wrap) */
			break;
	}
	for (c = 0; c < tl->nr_cpus; c++) {
		y = SVG_TOP + c * (LANE_H + LANE_GAP);
		fprintf(f, "<text x=\"8\" y=\"%.0f\" font-size=\"12\">CPU %u</text>"
			"<rect x=\"%d\" y=\"%.0f\" width=\"%.0f\" height=\"%d\" fill=\"#f4f4f4\"/>\n",
			y + LANE_H / 2 + 4, c, SVG_LEFT, y, plot_w, LANE_H);
	}
	/* slices */
	for (i = 0; i < tl->n; i++) {
		const struct ae_slice *s = &tl->s[i];
		double x = SVG_LEFT + (s->start - tl->t0) * scale;
		double w = (s->end - s->start) * scale;
		unsigned int h = hue(s->pid);

		if (w < 0.3)
			w = 0.3;	/* every slice stays visible */
		y = SVG_TOP + s->cpu * (LANE_H + LANE_GAP);
		slice_name(s, name, sizeof(name));
		fprintf(f, "<g><title>");
		xml_str(f, name, 64);
		fmt_time(tb, sizeof(tb), s->end - s->start);
		fprintf(f, " on CPU %u, %s, %s", s->cpu, tb, s->traced ? "traced" : "untraced");
		if (s->insns)
			fprintf(f, ", %" PRIu64 " instructions", s->insns);
		fputs("</title>", f);
		if (s->traced)
			fprintf(f, "<rect class=\"slice traced\" x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" fill=\"hsl(%u,70%%,50%%)\" stroke=\"#000\" stroke-width=\"0.6\"/>",
				x, y, w, LANE_H, h);
		else
			fprintf(f, "<rect class=\"slice untraced\" x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" fill=\"hsl(%u,60%%,78%%)\" stroke=\"#fff\" stroke-width=\"0.4\"/>"
				"<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" fill=\"url(#hatch)\"/>",
				x, y + 4, w, LANE_H - 8, h, x, y + 4, w, LANE_H - 8);
		/* the longest label that fits whole: name and count, name, comm */
		{
			char label[96] = "";
			size_t fit = w / CHAR_W;

			if (s->insns)
				snprintf(label, sizeof(label), "%s %" PRIu64 " insns", name, s->insns);
			if (!s->insns || strlen(label) > fit)
				snprintf(label, sizeof(label), "%s", name);
			if (strlen(label) > fit)
				snprintf(label, sizeof(label), "%s", s->comm);
			if (label[0] && strlen(label) <= fit) {
				fprintf(f, "<text x=\"%.2f\" y=\"%.0f\"%s>", x + 2, y + LANE_H / 2 + 4,
					s->traced ? " fill=\"#fff\"" : " font-style=\"italic\"");
				xml_str(f, label, sizeof(label));
				fputs("</text>", f);
			}
		}
		fputs("</g>\n", f);
	}
	/* legend: style, then one swatch per process */
	y = SVG_TOP + lanes_h + 24;
	fprintf(f, "<rect x=\"%d\" y=\"%.0f\" width=\"24\" height=\"12\" fill=\"#777\" stroke=\"#000\" stroke-width=\"0.6\"/>"
		"<text x=\"%d\" y=\"%.0f\">traced (kernel markers)</text>\n", SVG_LEFT, y - 10, SVG_LEFT + 30, y);
	fprintf(f, "<rect x=\"%d\" y=\"%.0f\" width=\"24\" height=\"12\" fill=\"#ccc\"/>"
		"<rect x=\"%d\" y=\"%.0f\" width=\"24\" height=\"12\" fill=\"url(#hatch)\"/>"
		"<text x=\"%d\" y=\"%.0f\" font-style=\"italic\">untraced (BPF log only)</text>\n",
		SVG_LEFT + 220, y - 10, SVG_LEFT + 220, y - 10, SVG_LEFT + 250, y);
	for (i = 0; i < tl->n && shown < 60; i++) {
		const struct ae_slice *s = by_pid[i];
		double lx = SVG_LEFT + (shown % 4) * 320;
		double ly = y + 18 + (shown / 4) * 18;
		size_t j;

		if (i && s->pid == by_pid[i - 1]->pid)
			continue;
		/* the process's latest name (after any exec) */
		for (j = i + 1; j < tl->n && by_pid[j]->pid == s->pid; j++)
			if (by_pid[j]->start > s->start && by_pid[j]->comm[0])
				s = by_pid[j];
		fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"hsl(%u,70%%,50%%)\"/><text x=\"%.0f\" y=\"%.0f\">",
			lx, ly - 10, hue(s->pid), lx + 16, ly);
		if (s->comm[0]) {
			xml_str(f, s->comm, 16);
			fprintf(f, " (pid %d)", s->pid);
		} else {
			fprintf(f, "pid %d", s->pid);
		}
		fputs("</text>\n", f);
		shown++;
	}
	if (nproc > shown)
		fprintf(f, "<text x=\"%d\" y=\"%.0f\">... and %zu more processes</text>\n",
			SVG_LEFT, y + 18 + (shown / 4 + 1) * 18, nproc - shown);
	fputs("</svg>\n", f);
	free(by_pid);
	return ferror(f) ? -EIO : 0;
}
