# tests/workload/: the whole-system workload (issue 9): a pipe ping-pong
# pair, a fork+exec of a traced leaf program, a 4-thread program, signals in
# threads (sigthreads), exec from a non-leader thread (mtexec), vfork and
# posix_spawn (spawn), N live threads at once (barrier), an exec through
# the i386 entry (int80exec), signals to the process group (grpsig), an
# exec after dropping root (dropexec), a fork loop (forkloop), forks inside
# signal handlers (sigfork). Built with
# bin/aecc into build/tests/workload/ (each X with its twin X.orig), and
# runall, which starts them all at once.
WL_OBJ		:= $(OBJ)/tests/workload
WL_NAMES	:= pingpong leaf forkexec threads runall sigthreads mtexec spawn barrier int80exec grpsig dropexec forkloop sigfork
WL_PROGS	:= $(addprefix $(WL_OBJ)/,$(WL_NAMES))

# aecc writes X and X.orig in one run; X.orig is listed so make knows it.
$(WL_OBJ)/%: $(TOP)/tests/workload/%.c $(BIN)/aecc $(MUSL_STAMP) $(AE_RUNTIME_LIB) \
		$(AE_AERT_LIB) | $(WL_OBJ)/
	$(quiet) AECC $@
	$(Q)$(BIN)/aecc -O2 -Wall -o $@ $<

$(WL_OBJ)/%.orig: $(WL_OBJ)/% ;

$(WL_OBJ)/:
	$(Q)mkdir -p $@

.PHONY: workload
workload: $(WL_PROGS)

ALL_TARGETS += workload

# The stepper's --split mode on the workload twins.
CHECK_TARGETS += tests/host/oracle-split.sh
