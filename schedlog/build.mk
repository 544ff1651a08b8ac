# schedlog/: the ground floor of the user side (libschedlog.a): the trace
# container codec, the schedule-log (marker) reader, the demultiplexer of
# captures into per-task slices, whole reads/writes; and bin/schedlog.
# bdump, aerun and analysis link it; it depends on nothing of theirs.

SCHEDLOG_OBJ := $(OBJ)/schedlog
SCHEDLOG_LIB := $(SCHEDLOG_OBJ)/libschedlog.a
# Everything that reads or writes containers links this and the libraries
# the codec uses (zstd; ISA-L for the chunks' CRC-32C).
AE_CONTAINER_LIB := $(SCHEDLOG_LIB)
AE_CONTAINER_EXTLIBS := -lzstd -lisal
AE_CONTAINER_LDLIBS := $(AE_CONTAINER_LIB) $(AE_CONTAINER_EXTLIBS)
export AE_CONTAINER_LIB AE_CONTAINER_EXTLIBS AE_CONTAINER_LDLIBS

SCHEDLOG_LIB_SRCS := container.c fullio.c outfile.c marker.c demux.c
SCHEDLOG_HDRS := $(wildcard include/aetrace/*.h) include/uapi/linux/trbuf.h

$(SCHEDLOG_OBJ)/%.o: schedlog/%.c $(SCHEDLOG_HDRS) | $(SCHEDLOG_OBJ)
	$(quiet) CC $@
	$(Q)$(CC) $(CFLAGS) -I$(TOP)/include/uapi -c -o $@ $<

$(SCHEDLOG_OBJ):
	$(Q)mkdir -p $@

$(SCHEDLOG_LIB): $(addprefix $(SCHEDLOG_OBJ)/,$(SCHEDLOG_LIB_SRCS:.c=.o))
	$(quiet) AR $@
	$(Q)rm -f $@ && ar rcs $@ $^

$(BIN)/schedlog: $(SCHEDLOG_OBJ)/schedlog.o $(SCHEDLOG_LIB) | $(BIN)
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(AE_CONTAINER_EXTLIBS)

ALL_TARGETS += $(SCHEDLOG_LIB) $(BIN)/schedlog
