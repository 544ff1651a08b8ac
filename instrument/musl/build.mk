# The tracing musl libc (instrument/musl/build-musl.sh; its source package
# comes from `make deps`), the real programs
# built on it (tests/real/: Lua 5.4, bzip2) with their test suite and the
# standalone-capture benchmark. Included from instrument/build.mk.
#
# AE_MUSL_CC is the compiler musl is built with: bin/aecc (instrumented
# objects with embedded twins). AE_MUSL_CC_DEPS are further files whose
# content decides the build (hashed into the cache key, as is the compiler
# binary itself). `make musl AE_MUSL_CC='gcc -ffixed-r15'` builds the
# uninstrumented stand-in (tests/real/ programs then need
# AECC=tests/real/cc-standin.sh).

MUSL_LINK	:= $(OBJ)/musl
MUSL_STAMP	:= $(MUSL_LINK)/.stamp
AE_MUSL_CC	?= $(BIN)/aecc
AE_MUSL_CC_DEPS	?=

# The script is cheap when the hash-keyed cache entry exists, so it always
# runs; it touches the stamp only when build/musl changes target.
$(MUSL_STAMP): FORCE-musl $(filter $(BIN)/%,$(firstword $(AE_MUSL_CC))) | $(OBJ)
	$(Q)AE_CACHE='$(AE_CACHE)' MUSL_CC='$(AE_MUSL_CC)' \
		MUSL_CC_DEPS='$(AE_MUSL_CC_DEPS)' MUSL_LINK='$(MUSL_LINK)' \
		MUSL_LOG='$(OBJ)/musl-build.log' V='$(V)' \
		$(TOP)/instrument/musl/build-musl.sh

.PHONY: musl real-programs FORCE-musl
FORCE-musl:
musl: $(MUSL_STAMP)

# Lua and bzip2, built with bin/aecc (or $AECC); cached by hash in
# $(AE_CACHE), linked from build/real/. Their source packages come from
# `make deps`.
real-programs: $(MUSL_STAMP) $(BIN)/aecc
	$(Q)AE_CACHE='$(AE_CACHE)' $(TOP)/tests/real/lua.sh
	$(Q)AE_CACHE='$(AE_CACHE)' $(TOP)/tests/real/bzip2.sh

ALL_TARGETS	+= musl
# Built before any suite runs, so no suite sees a Lua or bzip2 linked with
# an older runtime.
CHECK_BUILD_TARGETS += real-programs
CHECK_TARGETS	+= tests/host/real-programs.sh
# dash (built by the suite, cached like the others): every task of a script
CHECK_TARGETS	+= tests/host/real-dash.sh
BENCH_TARGETS	+= bench/standalone-bench.sh
BENCH_TARGETS	+= bench/data-bench.sh
BENCH_TARGETS	+= bench/memfn-bench.sh

# The data-traced musl (aecc -fae-data, issue 12): programs built with
# -fae-data link it from build/musl-data; the compiler command is part of
# the cache key, so it is a separate cache entry.
.PHONY: musl-data
musl-data: $(BIN)/aecc | $(OBJ)
	$(Q)AE_CACHE='$(AE_CACHE)' MUSL_CC='$(BIN)/aecc -fae-data -fae-memfn-lib' \
		MUSL_CC_DEPS='$(AE_MUSL_CC_DEPS)' MUSL_LINK='$(OBJ)/musl-data' \
		MUSL_LOG='$(OBJ)/musl-data-build.log' V='$(V)' \
		$(TOP)/instrument/musl/build-musl.sh
CHECK_BUILD_TARGETS += musl-data
