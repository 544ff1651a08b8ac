# tests/: the independent oracles (ae-step, ae-tracecmp, lackey.sh), the C
# test corpus and the host test suites. Outputs in build/tests/.
TESTS_OBJ	:= $(OBJ)/tests
TESTS_CORPUS	:= $(wildcard $(TOP)/tests/corpus/*.c)
TESTS_NAMES	:= $(notdir $(TESTS_CORPUS:.c=))

$(TESTS_OBJ)/ae-step: $(TOP)/tests/oracle/ptrace-step.c $(TOP)/tests/oracle/step-data.c | $(TESTS_OBJ)/
	$(quiet) CC $@
	$(Q)$(CC) $(CFLAGS) -o $@ $< -lcapstone -lelf $(LDFLAGS)

$(TESTS_OBJ)/ae-tracecmp: $(TOP)/tests/oracle/tracecmp.c | $(TESTS_OBJ)/
	$(quiet) CC $@
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(LDFLAGS)

# The corpus, built natively (gcc -O2) and static with musl (musl-gcc
# -static -O2). musl-gcc comes from the 'check' dependency group, so
# `make check` builds the corpus, not `make all`.
$(TESTS_OBJ)/corpus/gcc/%: $(TOP)/tests/corpus/%.c | $(TESTS_OBJ)/corpus/gcc/
	$(quiet) CC $@
	$(Q)gcc -O2 -Wall -Werror -o $@ $< -lm

$(TESTS_OBJ)/corpus/musl/%: $(TOP)/tests/corpus/%.c | $(TESTS_OBJ)/corpus/musl/
	$(quiet) MUSLCC $@
	$(Q)musl-gcc -static -O2 -Wall -Werror -o $@ $< -lm

# The corpus built once with aecc (NAME and its twin NAME.orig), shared by
# tests/host/trace-exact.sh and lackey-same-run.sh (tests/host/corpus-aecc.sh).
$(TESTS_OBJ)/corpus/aecc/%: $(TOP)/tests/corpus/%.c $(BIN)/aecc $(AE_RUNTIME_LIB) \
		$(AE_AERT_LIB) $(MUSL_STAMP) | $(TESTS_OBJ)/corpus/aecc/
	$(quiet) AECC $@
	$(Q)$(BIN)/aecc -O2 -o $@ $< -lm

$(TESTS_OBJ)/ $(TESTS_OBJ)/corpus/gcc/ $(TESTS_OBJ)/corpus/musl/ $(TESTS_OBJ)/corpus/aecc/:
	$(Q)mkdir -p $@

.PHONY: tests-oracles tests-corpus tests-corpus-aecc
tests-oracles: $(TESTS_OBJ)/ae-step $(TESTS_OBJ)/ae-tracecmp
tests-corpus: $(addprefix $(TESTS_OBJ)/corpus/gcc/,$(TESTS_NAMES)) \
	      $(addprefix $(TESTS_OBJ)/corpus/musl/,$(TESTS_NAMES))
tests-corpus-aecc: $(addprefix $(TESTS_OBJ)/corpus/aecc/,$(TESTS_NAMES))

ALL_TARGETS += tests-oracles
CHECK_BUILD_TARGETS += tests-corpus tests-corpus-aecc
CHECK_TARGETS += tests/host/oracle-agree.sh tests/host/trace-exact.sh tests/host/lackey-same-run.sh \
	tests/host/step-cache-test.sh tests/host/oracle-data.sh

# A test helper for tests/host/aetrace-errors.sh and data-exact.sh: rewrites
# a trace with one witness byte changed or its SIGNAL markers' %rsp moved.
$(TESTS_OBJ)/trace_mutate: $(TOP)/tests/host/trace_mutate.c $(AE_CONTAINER_LIB) include/uapi/linux/trbuf.h | $(TESTS_OBJ)/
	$(quiet) CC $@
	$(Q)$(CC) $(CFLAGS) -I$(TOP)/include/uapi -o $@ $< $(AE_CONTAINER_LDLIBS) $(LDFLAGS)

ALL_TARGETS += $(TESTS_OBJ)/trace_mutate
CHECK_TARGETS += tests/host/aetrace-errors.sh tests/host/kill-seq.sh

# Unit tests of the instrumenter on hand-written assembly (milliseconds;
# the first tier of make check): aecc's objects without its main().
UNIT_OBJ := $(OBJ)/tests/unit
AECC_LIB_OBJS := $(filter-out %/aecc.o,$(AECC_OBJS))

$(UNIT_OBJ)/aecc_place: tests/unit/aecc_place.c $(AECC_LIB_OBJS) $(wildcard instrument/aecc/*.h)
	$(quiet) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Iinstrument/aecc -o $@ $< $(AECC_LIB_OBJS) -lcapstone -lelf -lm

ALL_TARGETS += $(UNIT_OBJ)/aecc_place
CHECK_UNIT_TARGETS += $(UNIT_OBJ)/aecc_place tests/unit/aecc-errors.sh tests/unit/aecc-cc.sh

# capmix: hand-built whole-system captures for tests/host/regen-synth.sh.
$(TESTS_OBJ)/capmix: $(TOP)/tests/host/capmix.c $(AE_CONTAINER_LIB) | $(TESTS_OBJ)/
	$(quiet) CC $@
	$(Q)$(CC) $(CFLAGS) -I$(TOP)/include/uapi -o $@ $< $(AE_CONTAINER_LDLIBS) $(LDFLAGS)

ALL_TARGETS += $(TESTS_OBJ)/capmix
CHECK_TARGETS += tests/host/regen-synth.sh

# The container codec's test driver (tests/host/bdump-format.sh, bdump-net,
# bdump-pipe, tests/fuzz, bench/bdump-bench.sh), on schedlog's library.
$(TESTS_OBJ)/container_test: $(TOP)/tests/unit/container_test.c $(AE_CONTAINER_LIB) include/aetrace/container.h | $(TESTS_OBJ)/
	$(quiet) CC $@
	$(Q)$(CC) $(CFLAGS) -I$(TOP)/include/uapi -o $@ $< $(AE_CONTAINER_LDLIBS) $(LDFLAGS)

ALL_TARGETS += $(TESTS_OBJ)/container_test

# Unit test of the data-tracing transfer functions (dataflow/dataflow.c).
$(UNIT_OBJ)/dataflow: tests/unit/dataflow.c $(AE_DATAFLOW_OBJ) include/aetrace/dataflow.h
	$(quiet) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(AE_DATAFLOW_OBJ) -lcapstone
ALL_TARGETS += $(UNIT_OBJ)/dataflow
CHECK_UNIT_TARGETS += $(UNIT_OBJ)/dataflow

# The status flags it computes, against the CPU's (x86-64 hosts only).
$(UNIT_OBJ)/dataflow_flags: tests/unit/dataflow_flags.c $(AE_DATAFLOW_OBJ) include/aetrace/dataflow.h
	$(quiet) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(AE_DATAFLOW_OBJ) -lcapstone
ALL_TARGETS += $(UNIT_OBJ)/dataflow_flags
CHECK_UNIT_TARGETS += $(UNIT_OBJ)/dataflow_flags

# Unit test of the library-routine expander's emulator (analysis/memfn.c,
# libunicorn) on hand-assembled routines.
$(UNIT_OBJ)/memfn: tests/unit/memfn.c $(OBJ)/analysis/memfn.o analysis/memfn.h
	$(quiet) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -o $@ $< $(OBJ)/analysis/memfn.o -lunicorn
ALL_TARGETS += $(UNIT_OBJ)/memfn
CHECK_UNIT_TARGETS += $(UNIT_OBJ)/memfn
