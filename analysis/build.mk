# analysis/: the aetrace CLI (regeneration, stats).

AETRACE_SRCS := $(wildcard analysis/*.c)
AETRACE_OBJS := $(AETRACE_SRCS:%.c=$(OBJ)/%.o) $(AE_DATAFLOW_OBJ)

$(OBJ)/analysis/%.o: analysis/%.c $(wildcard analysis/*.h) $(wildcard include/aetrace/*.h)
	$(quiet) CC $@
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -I$(TOP)/include/uapi -c -o $@ $<

$(BIN)/aetrace: $(AETRACE_OBJS) $(AE_CONTAINER_LIB) | $(BIN)
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $(AETRACE_OBJS) $(AE_CONTAINER_LDLIBS) -lcapstone -lelf -lunicorn

ALL_TARGETS += $(BIN)/aetrace
CHECK_TARGETS += tests/host/regen-workload.sh
BENCH_TARGETS += bench/regen-bench.sh
CHECK_TARGETS += tests/host/regen-vm.sh
# exact data address traces (aecc -fae-data, regen L/S/M records)
CHECK_TARGETS += tests/host/data-exact.sh
