/* SPDX-License-Identifier: MIT */
/*
 * paths.h - where the project's parts are, found from aecc's own place
 * (<top>/bin/aecc -> <top>), or from the environment.
 */
#ifndef AE_PATHS_H
#define AE_PATHS_H

/* Returns the tracing musl's directory (include/, lib/): $AECC_MUSL or
 * <top>/build/musl. */
const char *ae_musl_dir(void);
/* The data-traced musl (-fae-data): $AECC_MUSL_DATA or build/musl-data. */
const char *ae_musl_data_dir(void);
/* Returns the runtime archive: $AECC_LIBAE or <top>/build/instrument/libae.a. */
const char *ae_libae(void);
/* Returns the archive of libgcc helpers: <top>/build/instrument/libaert.a. */
const char *ae_libaert(void);

/* libaert built with -fae-data: <top>/build/instrument/libaert-data.a */
const char *ae_libaert_data(void);

#endif
