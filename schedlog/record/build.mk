# schedlog/record/: schedlog-record, the BPF scheduler recorder (libbpf,
# CO-RE). vmlinux.h is dumped from the build machine's kernel BTF
# ($(SCHEDREC_BTF)); the programs relocate against the running kernel's BTF
# at load. Without clang, bpftool, libbpf-dev or kernel BTF the recorder is
# skipped with a note (scripts/deps.sh bpf) and everything else still builds.

SCHEDREC_OBJ := $(OBJ)/schedlog/record
SCHEDREC_BTF ?= /sys/kernel/btf/vmlinux
BPF_CLANG ?= clang
BPFTOOL ?= $(shell command -v bpftool || ls /usr/sbin/bpftool 2>/dev/null)
SCHEDREC_CAN := $(and $(shell command -v $(BPF_CLANG)),$(BPFTOOL),$(wildcard /usr/include/bpf/libbpf.h),$(wildcard $(SCHEDREC_BTF)))

ifneq ($(SCHEDREC_CAN),)
$(SCHEDREC_OBJ)/vmlinux.h: | $(SCHEDREC_OBJ)
	$(quiet) BTF $@
	$(Q)$(BPFTOOL) btf dump file $(SCHEDREC_BTF) format c >$@

$(SCHEDREC_OBJ)/schedlog_record.bpf.o: schedlog/record/schedlog_record.bpf.c schedlog/record/sched_event.h \
		$(SCHEDREC_OBJ)/vmlinux.h
	$(quiet) BPF $@
	$(Q)$(BPF_CLANG) -target bpf -g -O2 -Wall -D__TARGET_ARCH_x86 -I$(SCHEDREC_OBJ) -Ischedlog/record \
		-c -o $@ $<

$(SCHEDREC_OBJ)/schedlog_record.skel.h: $(SCHEDREC_OBJ)/schedlog_record.bpf.o
	$(quiet) GEN $@
	$(Q)$(BPFTOOL) gen skeleton $< name schedlog_record_bpf >$@

$(SCHEDREC_OBJ)/schedlog_record.o: schedlog/record/schedlog_record.c schedlog/record/sched_event.h \
		$(SCHEDREC_OBJ)/schedlog_record.skel.h
	$(quiet) CC $@
	$(Q)$(CC) $(CFLAGS) -I$(SCHEDREC_OBJ) -Ischedlog/record -c -o $@ $<

$(BIN)/schedlog-record: $(SCHEDREC_OBJ)/schedlog_record.o | $(BIN)
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lbpf -lelf -lz

ALL_TARGETS += $(BIN)/schedlog-record
else
.PHONY: schedlog-record-skipped
schedlog-record-skipped:
	@echo "  SKIP    bin/schedlog-record: needs clang, bpftool, libbpf-dev (scripts/deps.sh bpf) and $(SCHEDREC_BTF)"
ALL_TARGETS += schedlog-record-skipped
endif

$(SCHEDREC_OBJ):
	$(Q)mkdir -p $@

CHECK_TARGETS += tests/host/schedlog-record.sh

# The known workload of tests/host/schedlog-record.sh (no BPF needed).
$(OBJ)/tests/host/sched_workload: tests/host/sched_workload.c
	$(quiet) CC $@
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) -o $@ $<

ALL_TARGETS += $(OBJ)/tests/host/sched_workload

# Starting and stopping the recorder from another program (no BPF needed):
# bdump --bpf-sched links it.
$(SCHEDREC_OBJ)/spawn.o: schedlog/record/spawn.c schedlog/record/spawn.h schedlog/record/sched_event.h | $(SCHEDREC_OBJ)
	$(quiet) CC $@
	$(Q)$(CC) $(CFLAGS) -Ischedlog/record -c -o $@ $<

$(BIN)/bdump: $(SCHEDREC_OBJ)/spawn.o
$(OBJ)/bdump/bdump.o: CFLAGS += -I$(TOP)/schedlog/record
$(OBJ)/bdump/bdump.o: schedlog/record/spawn.h

# aetrace timeline (analysis/timeline*.c) reads the BPF log.
$(OBJ)/analysis/timeline.o: CFLAGS += -I$(TOP)/schedlog/record
$(OBJ)/analysis/timeline.o: schedlog/record/sched_event.h
CHECK_TARGETS += tests/host/timeline.sh
CHECK_TARGETS += tests/host/schedlog-vm.sh
