# instrument/runtime.mk: the tracing runtime libae.a (linked by aecc into
# every instrumented prog), bin/aerun (standalone capture) and their host
# tests. Included from instrument/build.mk.

RT_OBJ := $(OBJ)/instrument/runtime
AE_RUNTIME_LIB := $(OBJ)/instrument/libae.a

# Freestanding: no libc (it is instrumented), no r15 (invariant 1).
RT_CFLAGS := -O2 -g -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
	-ffixed-r15 -ffreestanding -fno-stack-protector -fno-builtin -nostdlib \
	-fno-asynchronous-unwind-tables -fno-pie -fcf-protection=none \
	-I$(TOP)/include/uapi -I$(TOP)/include -Iinstrument/runtime $(AE_PREFIX_MAP)

# Kernel mode (/dev/trbuf, trbuf_mode.c): `make AE_TRBUF_MODE=n` builds a
# runtime without it (standalone, capture and discard modes only).
AE_TRBUF_MODE ?= y
RT_CFLAGS += $(if $(filter y,$(AE_TRBUF_MODE)),-DAE_HAVE_TRBUF_MODE)

RT_SRCS := $(filter-out $(if $(filter y,$(AE_TRBUF_MODE)),,%/trbuf_mode.c), \
	$(wildcard instrument/runtime/*.c) $(wildcard instrument/runtime/*.S))
RT_OBJS := $(patsubst instrument/runtime/%,$(RT_OBJ)/%.o,$(RT_SRCS))
RT_HDRS := $(wildcard instrument/runtime/*.h) include/uapi/linux/trbuf.h include/aetrace/capture.h include/aetrace/regrec.h

$(RT_OBJ)/%.c.o: instrument/runtime/%.c $(RT_HDRS) | $(RT_OBJ)
	$(quiet) CC $@
	$(Q)$(CC) $(RT_CFLAGS) -c -o $@ $<

$(RT_OBJ)/%.S.o: instrument/runtime/%.S | $(RT_OBJ)
	$(quiet) AS $@
	$(Q)$(CC) $(RT_CFLAGS) -c -o $@ $<

# prog and prog.orig share one data layout, so the runtime adds no data:
# its read-only constants move into its code; writable data is an error.
$(AE_RUNTIME_LIB): $(RT_OBJS)
	$(quiet) AR $@
	$(Q)for o in $^; do \
		for s in $$(objdump -h $$o | awk '$$2 ~ /^\.(rodata|data|bss)/ && $$3 !~ /^0+$$/ {print $$2}'); do \
			case $$s in \
			.rodata*) objcopy --rename-section $$s=.text.ae$$s,alloc,load,readonly,code,contents $$o ;; \
			*) echo "libae: $$o has $$s: the runtime must not add data" >&2; exit 1 ;; \
			esac; \
		done; \
	done
	$(Q)rm -f $@ && ar rcs $@ $^

# aerun: host program (ordinary libc, not traced).
AERUN_OBJ := $(OBJ)/instrument/aerun
AERUN_SRCS := $(wildcard instrument/aerun/*.c)
AERUN_OBJS := $(patsubst instrument/aerun/%.c,$(AERUN_OBJ)/%.o,$(AERUN_SRCS))

$(AERUN_OBJ)/%.o: instrument/aerun/%.c $(wildcard instrument/aerun/*.h) \
		instrument/runtime/standalone.h include/aetrace/container.h \
		include/uapi/linux/trbuf.h | $(AERUN_OBJ)
	$(quiet) CC $@
	$(Q)$(CC) $(CFLAGS) -I$(TOP)/include/uapi -Iinstrument/runtime -c -o $@ $<

$(BIN)/aerun: $(AERUN_OBJS) $(AE_CONTAINER_LIB) | $(BIN)
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $(AERUN_OBJS) $(AE_CONTAINER_LDLIBS) -lelf -lpthread

# Host tests: hand-written producers (no aecc needed) and the checker.
AERUN_TOBJ := $(OBJ)/tests/host/aerun
AERUN_PRODUCERS := $(AERUN_TOBJ)/prod $(AERUN_TOBJ)/prod-noseq

$(AERUN_TOBJ)/prod_main.o: tests/host/producers/prod_main.c tests/host/producers/prod.h | $(AERUN_TOBJ)
	$(quiet) CC $@
	$(Q)$(CC) $(RT_CFLAGS) -c -o $@ $<

$(AERUN_TOBJ)/prod_seq.o: tests/host/producers/prod_seq.S tests/host/producers/prod.h | $(AERUN_TOBJ)
	$(quiet) AS $@
	$(Q)$(CC) $(RT_CFLAGS) -c -o $@ $<

# Same code, but its sequences are missing from __ae_seqtab: no rollback.
$(AERUN_TOBJ)/prod_seq_noseq.o: tests/host/producers/prod_seq.S tests/host/producers/prod.h | $(AERUN_TOBJ)
	$(quiet) AS $@
	$(Q)$(CC) $(RT_CFLAGS) -DAE_PROD_NO_SEQTAB -c -o $@ $<

PROD_LDFLAGS := -nostdlib -static -no-pie -ffixed-r15 -e _ae_start

$(AERUN_TOBJ)/prod: $(AERUN_TOBJ)/prod_seq.o $(AERUN_TOBJ)/prod_main.o $(AE_RUNTIME_LIB)
	$(quiet) LD $@
	$(Q)$(CC) $(PROD_LDFLAGS) -o $@ $^

$(AERUN_TOBJ)/prod-noseq: $(AERUN_TOBJ)/prod_seq_noseq.o $(AERUN_TOBJ)/prod_main.o $(AE_RUNTIME_LIB)
	$(quiet) LD $@
	$(Q)$(CC) $(PROD_LDFLAGS) -o $@ $^

$(AERUN_TOBJ)/aerun_check: tests/host/aerun_check.c tests/host/producers/prod.h \
		include/aetrace/container.h $(AE_CONTAINER_LIB) | $(AERUN_TOBJ)
	$(quiet) LD $@
	$(Q)$(CC) $(CFLAGS) -I$(TOP)/include/uapi -o $@ $< $(AE_CONTAINER_LDLIBS)

$(AERUN_TOBJ)/aerun_storm: tests/host/aerun_storm.c | $(AERUN_TOBJ)
	$(quiet) LD $@
	$(Q)$(CC) $(CFLAGS) -o $@ $<

$(RT_OBJ) $(AERUN_OBJ) $(AERUN_TOBJ):
	$(Q)mkdir -p $@

ALL_TARGETS += $(AE_RUNTIME_LIB) $(BIN)/aerun $(AERUN_PRODUCERS) \
	$(AERUN_TOBJ)/aerun_check $(AERUN_TOBJ)/aerun_storm
CHECK_TARGETS += tests/host/aerun-capture.sh tests/host/aerun-signals.sh tests/host/aerun-multi.sh \
	tests/host/aerun-cli.sh

# Multi-task captures: checker and image extractor (tests/host/aerun-multi.sh).
$(AERUN_TOBJ)/aerun_region: tests/host/aerun_region.c include/aetrace/container.h \
		$(AE_CONTAINER_LIB) | $(AERUN_TOBJ)
	$(quiet) LD $@
	$(Q)$(CC) $(CFLAGS) -I$(TOP)/include/uapi -o $@ $< $(AE_CONTAINER_LDLIBS)

ALL_TARGETS += $(AERUN_TOBJ)/aerun_region
