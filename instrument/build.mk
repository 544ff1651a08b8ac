# instrument/: aecc (driver + instrumenter), the tracing runtime, aerun,
# and the tracing musl recipe.

AECC_SRCS := $(wildcard instrument/aecc/*.c)
AECC_OBJS := $(AECC_SRCS:%.c=$(OBJ)/%.o)

# dataflow/: the transfer functions of data tracing, linked into both aecc
# and aetrace (depends on neither).
AE_DATAFLOW_OBJ := $(OBJ)/dataflow/dataflow.o
$(AE_DATAFLOW_OBJ): dataflow/dataflow.c include/aetrace/dataflow.h
	$(quiet) CC $@
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -c -o $@ $<
AECC_OBJS += $(AE_DATAFLOW_OBJ)
GCC_INCLUDE_DIR := $(shell $(CC) -print-file-name=include)

$(OBJ)/instrument/aecc/%.o: instrument/aecc/%.c $(wildcard instrument/aecc/*.h) include/aetrace/schema.h include/aetrace/dataflow.h include/aetrace/vcprof.h
	$(quiet) CC $@
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -DGCC_INCLUDE_DIR='"$(GCC_INCLUDE_DIR)"' -c -o $@ $<

$(BIN)/aecc: $(AECC_OBJS) | $(BIN)
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lcapstone -lelf -lm

ALL_TARGETS += $(BIN)/aecc

# libaert: the libgcc helpers traced programs need, compiled by aecc.
AERT_SRCS := $(wildcard instrument/libaert/*.c)
AERT_OBJS := $(AERT_SRCS:%.c=$(OBJ)/%.o)
AE_AERT_LIB := $(OBJ)/instrument/libaert.a

$(OBJ)/instrument/libaert/%.o: instrument/libaert/%.c $(BIN)/aecc
	$(quiet) AECC $@
	$(Q)mkdir -p $(dir $@)
	$(Q)$(BIN)/aecc -O2 -nostdinc -fno-builtin -c -o $@ $<

$(AE_AERT_LIB): $(AERT_OBJS)
	$(quiet) AR $@
	$(Q)rm -f $@ && ar rcs $@ $^

ALL_TARGETS += $(AE_AERT_LIB)

# The same helpers for programs built with -fae-data (data tracing).
AERT_DATA_OBJS := $(AERT_SRCS:instrument/libaert/%.c=$(OBJ)/instrument/libaert-data/%.o)
AE_AERT_DATA_LIB := $(OBJ)/instrument/libaert-data.a

$(OBJ)/instrument/libaert-data/%.o: instrument/libaert/%.c $(BIN)/aecc
	$(quiet) AECC $@
	$(Q)mkdir -p $(dir $@)
	$(Q)$(BIN)/aecc -fae-data -O2 -nostdinc -fno-builtin -c -o $@ $<

$(AE_AERT_DATA_LIB): $(AERT_DATA_OBJS)
	$(quiet) AR $@
	$(Q)rm -f $@ && ar rcs $@ $^

ALL_TARGETS += $(AE_AERT_DATA_LIB)

include instrument/runtime.mk
include instrument/musl/build.mk
