/* SPDX-License-Identifier: MIT */
#ifndef AE_SALVAGE_H
#define AE_SALVAGE_H

/*
 * `aetrace salvage IN OUT` (argv[0] "salvage"): copies the sound chunks
 * of a capture cut short into OUT. Returns 0 (OUT holds at least the
 * SESSION chunk), 1 on an error (named on stderr), 2 on bad usage.
 */
int ae_salvage_main(int argc, char **argv);

#endif
