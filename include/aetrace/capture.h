/* SPDX-License-Identifier: MIT */
/* capture.h - the raw capture file of AE_CAPTURE mode
 * (instrument/runtime/capture.c), read by aetrace (docs/FORMAT.md) */
#ifndef AE_CAPTURE_H
#define AE_CAPTURE_H

#include <linux/types.h>

#define AE_CAPTURE_MAGIC	0x3130545041434541ull	/* "AECAPT01" */

struct ae_capture_hdr {
	__u64 magic;
	__u64 len;		/* witness bytes that follow */
	__u64 exit_entry;	/* prog address of _Exit's first instruction */
};

#endif
