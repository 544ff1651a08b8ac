/* SPDX-License-Identifier: MIT */
/* run.h - running the tools aecc drives (gcc, as, ar, objcopy) */
#ifndef AE_RUN_H
#define AE_RUN_H

/*
 * Run argv[0] (searched in PATH) with argv and wait for it; with `verbose`
 * print the command on stderr first. Returns 0 when it exited with status
 * 0, else -1 after one line on stderr naming the cause (cannot start,
 * killed by a signal; a tool that exits non-zero reports for itself).
 */
int ae_run(char *const argv[], int verbose);

#endif
