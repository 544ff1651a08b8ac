# aetrace top-level Makefile: one non-recursive build; each component adds
# its rules in <dir>/build.mk. `make V=1` shows the commands.
.DELETE_ON_ERROR:
.SUFFIXES:
.DEFAULT_GOAL := all

# Expensive builds (musl, kernel, Lua) are cached outside the clone, keyed
# by a hash of their recipe.
AE_CACHE ?= $(HOME)/.cache/aetrace

# A clone whose path holds a blank: GNU make splits paths on blanks, so make
# runs again in a blank-free symlink to the clone, $(AE_CACHE)/links/<hash of
# the path>, with TOP naming the link (recipes use $(TOP) or relative paths;
# scripts find the repository through the link by their own $0).
ifneq ($(words $(CURDIR)),1)
ifneq ($(origin TOP),command line)
AE_LINK := $(shell c='$(subst ','\'',$(AE_CACHE))'; \
	d='$(subst ','\'',$(CURDIR))'; \
	case "$$c" in (*[[:space:]]*) exit 0 ;; esac; \
	l="$$c/links/$$(printf %s "$$d" | sha256sum | cut -c1-16)"; \
	mkdir -p "$$c/links" || exit 0; \
	[ "$$(readlink "$$l")" = "$$d" ] || ln -sfn "$$d" "$$l" || exit 0; \
	echo "$$l")
ifeq ($(AE_LINK),)
$(error the clone's path '$(CURDIR)' has a blank and no blank-free link to it could be made under AE_CACHE='$(AE_CACHE)': set AE_CACHE to a writable directory without blanks)
endif
AE_GOALS := $(or $(MAKECMDGOALS),all)
.PHONY: $(AE_GOALS)
$(firstword $(AE_GOALS)):
	+@cd '$(AE_LINK)' && $(MAKE) --no-print-directory TOP='$(AE_LINK)' $(MAKECMDGOALS)
$(wordlist 2,$(words $(AE_GOALS)),$(AE_GOALS)):
	@:
AE_REDIRECT := 1
endif
endif

ifeq ($(AE_REDIRECT),)
ifneq ($(origin TOP),command line)
TOP	:= $(abspath .)
endif
BIN	:= $(TOP)/bin
OBJ	:= $(TOP)/build

CC	?= gcc
CFLAGS	?= -O2 -g
CFLAGS	+= -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare \
	   -I$(TOP)/include -D_GNU_SOURCE
# Paths in debug info relative to the tree: every clone builds the same
# bytes, so content-keyed caches (musl, Lua, bzip2 keyed on bin/aecc and
# the runtime) hit from any clone.
AE_PREFIX_MAP := -ffile-prefix-map=$(TOP)=.
CFLAGS	+= $(AE_PREFIX_MAP)
LDFLAGS	?=

ifeq ($(V),1)
Q :=
quiet = @:
else
Q := @
quiet = @printf '  %-7s %s\n'
endif

# Components append to these. CHECK_BUILD_TARGETS: test inputs that need
# the 'check' dependency group, built by `make check` after `all`.
ALL_TARGETS :=
CHECK_BUILD_TARGETS :=
CHECK_UNIT_TARGETS :=
CHECK_TARGETS :=
BENCH_TARGETS :=

DEPS := $(TOP)/scripts/deps.sh

include schedlog/build.mk
include schedlog/record/build.mk
include instrument/build.mk
include analysis/build.mk
include bdump/build.mk
include trbuf-driver/build.mk
include vm/build.mk
include tests/build.mk
include tests/workload/build.mk
include tests/fuzz/build.mk

.PHONY: all deps check demo bench clean

# Plain `make` only builds: it never installs packages or touches /etc.
# `make deps` installs the Debian packages and downloads the Debian source
# packages (into $(AE_CACHE)/src) that the build and the tests need.
all: $(ALL_TARGETS)

deps:
	$(Q)AE_CACHE='$(AE_CACHE)' $(DEPS) build check src musl-src lua-src kernel vm bpf

$(BIN) $(OBJ):
	$(Q)mkdir -p $@

# make check: every test of the project, in tiers: unit tests (milliseconds,
# CHECK_UNIT_TARGETS), then the host suites, then the suites that boot the
# VM (named vm-*.sh or *-vm.sh). Prints each suite's and each tier's time;
# ends with "N passed, N failed, N skipped".
CHECK_VM_TARGETS = $(foreach t,$(CHECK_TARGETS),$(if $(filter vm-% %-vm.sh,$(notdir $(t))),$(t)))
CHECK_HOST_TARGETS = $(filter-out $(CHECK_VM_TARGETS),$(CHECK_TARGETS))

check: deps
	$(Q)$(MAKE) --no-print-directory all $(CHECK_BUILD_TARGETS)
	$(Q)$(TOP)/tests/run-all.sh --tier unit $(CHECK_UNIT_TARGETS) \
		--tier host $(CHECK_HOST_TARGETS) --tier vm $(CHECK_VM_TARGETS)

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(TOP)/scripts/demo.sh

bench: deps
	$(Q)$(DEPS) bench
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(TOP)/bench/run.sh $(BENCH_TARGETS)

clean:
	$(Q)rm -rf $(BIN) $(OBJ)

endif # AE_REDIRECT
