# instrument/: aecc (driver + instrumenter), the tracing runtime, aerun,
# and the tracing musl recipe.

AECC_SRCS := $(wildcard instrument/aecc/*.c)
AECC_OBJS := $(AECC_SRCS:%.c=$(OBJ)/%.o)
GCC_INCLUDE_DIR := $(shell $(CC) -print-file-name=include)

$(OBJ)/instrument/aecc/%.o: instrument/aecc/%.c $(wildcard instrument/aecc/*.h) include/aetrace/schema.h
	$(quiet) CC $@
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -DGCC_INCLUDE_DIR='"$(GCC_INCLUDE_DIR)"' -c -o $@ $<

$(BIN)/aecc: $(AECC_OBJS) | $(BIN)
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lcapstone -lelf -lm

ALL_TARGETS += $(BIN)/aecc

-include instrument/runtime.mk
-include instrument/musl/build.mk
