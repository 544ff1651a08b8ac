# tests/fuzz/: libFuzzer targets (clang, from scripts/deps.sh check) for the
# container reader + capture check and for bdump-recv's message parser,
# built with ASan and UBSan; tests/fuzz/fuzz.sh runs each for a fixed
# number of iterations in make check.
FUZZ_OBJ := $(OBJ)/fuzz
FUZZ_CC ?= clang
FUZZ_CFLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-std=gnu11 -D_GNU_SOURCE -I$(TOP)/include -I$(TOP)/include/uapi -I$(TOP)/bdump -I$(TOP)/schedlog
# The container codec's source, compiled here with the sanitizers.
FUZZ_CONTAINER_SRC := schedlog/container.c schedlog/fullio.c

$(FUZZ_OBJ)/fuzz_container: tests/fuzz/fuzz_container.c $(FUZZ_CONTAINER_SRC) bdump/check.c \
		bdump/source_synth.c $(wildcard bdump/*.h include/aetrace/container.h schedlog/*.h)
	$(quiet) FUZZCC $@
	$(Q)mkdir -p $(@D) && $(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(filter %.c,$^) $(AE_CONTAINER_EXTLIBS)

$(FUZZ_OBJ)/fuzz_wire: tests/fuzz/fuzz_wire.c bdump/wire.c $(FUZZ_CONTAINER_SRC) bdump/wire.h
	$(quiet) FUZZCC $@
	$(Q)mkdir -p $(@D) && $(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(filter %.c,$^) -lcrypto $(AE_CONTAINER_EXTLIBS)

# clang comes from the 'check' dependency group: built by make check.
CHECK_BUILD_TARGETS += $(FUZZ_OBJ)/fuzz_container $(FUZZ_OBJ)/fuzz_wire
CHECK_TARGETS += tests/fuzz/fuzz.sh
