/* SPDX-License-Identifier: MIT */
/*
 * spawn.h - run schedlog-record beside another program (bdump --bpf-sched,
 * schedlog record): start it, wait until its BPF programs are attached,
 * stop it with SIGTERM. The recorder is found through $AE_SCHEDLOG_RECORD,
 * then next to the running executable, then in $PATH.
 */
#ifndef SCHEDLOG_RECORD_SPAWN_H
#define SCHEDLOG_RECORD_SPAWN_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Start `schedlog-record -q -o OUT` in its own process group (a terminal's
 * Ctrl-C goes to the caller, which stops the recorder when it is done) and
 * wait until it records. Returns its pid, or -1 with a one-line reason in
 * err (BPF unavailable: the recorder's own message is on stderr).
 */
pid_t schedlog_record_spawn(const char *out, char *err, size_t errlen);

/*
 * Stop the recorder started by schedlog_record_spawn() and wait for it.
 * Returns 0 when it recorded everything, -1 with the reason in err (events
 * lost, write error, killed).
 */
int schedlog_record_stop(pid_t pid, char *err, size_t errlen);

#endif /* SCHEDLOG_RECORD_SPAWN_H */
