# aetrace top-level Makefile: one non-recursive build; each component adds
# its rules in <dir>/build.mk. `make V=1` shows the commands.
.DELETE_ON_ERROR:
.SUFFIXES:
.DEFAULT_GOAL := all

TOP	:= $(abspath .)
BIN	:= $(TOP)/bin
OBJ	:= $(TOP)/build
# Expensive builds (musl, kernel, Lua) are cached outside the clone, keyed
# by a hash of their recipe.
AE_CACHE ?= $(HOME)/.cache/aetrace

CC	?= gcc
CFLAGS	?= -O2 -g
CFLAGS	+= -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare -Wno-format-truncation \
	   -I$(TOP)/include -D_GNU_SOURCE
LDFLAGS	?=

ifeq ($(V),1)
Q :=
quiet = @:
else
Q := @
quiet = @printf '  %-7s %s\n'
endif

# Components append to these.
ALL_TARGETS :=
CHECK_TARGETS :=
BENCH_TARGETS :=
DEMO_TARGETS :=

DEPS := $(TOP)/scripts/deps.sh

-include instrument/build.mk
-include analysis/build.mk
-include bdump/build.mk
-include schedlog/build.mk
-include trbuf-driver/build.mk
-include vm/build.mk
-include tests/build.mk
-include tests/fuzz/build.mk
-include bench/build.mk

.PHONY: all deps check demo bench clean
all: deps-build $(ALL_TARGETS)

deps-build:
	$(Q)$(DEPS) build
deps-check:
	$(Q)$(DEPS) build check src kernel vm

$(BIN) $(OBJ):
	$(Q)mkdir -p $@

# make check: every test of the project; ends with "N passed, N failed".
check: deps-check
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(TOP)/tests/run-all.sh $(CHECK_TARGETS)

demo: deps-check
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(TOP)/scripts/demo.sh

bench: deps-check
	$(Q)$(DEPS) bench
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(TOP)/bench/run.sh $(BENCH_TARGETS)

clean:
	$(Q)rm -rf $(BIN) $(OBJ)
