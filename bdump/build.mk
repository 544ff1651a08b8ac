# bdump/: the consumer daemon bdump and the remote receiver bdump-recv
# (the container codec they use is in schedlog/).

BDUMP_OBJ := $(OBJ)/bdump

$(BDUMP_OBJ)/%.o: bdump/%.c $(wildcard bdump/*.h) include/aetrace/container.h include/uapi/linux/trbuf.h | $(BDUMP_OBJ)
	$(quiet) CC $@
	$(Q)$(CC) $(CFLAGS) -I$(TOP)/include/uapi -Ibdump -c -o $@ $<

$(BDUMP_OBJ):
	$(Q)mkdir -p $@

CHECK_TARGETS += tests/host/bdump-format.sh

BDUMP_OBJS := $(addprefix $(BDUMP_OBJ)/,bdump.o check.o source_file.o source_synth.o source_trbuf.o \
	net_client.o wire.o)
RECV_OBJS := $(addprefix $(BDUMP_OBJ)/,bdump_recv.o recv_store.o wire.o check.o source_synth.o)

$(BIN)/bdump: $(BDUMP_OBJS) $(AE_CONTAINER_LIB) | $(BIN)
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(AE_CONTAINER_EXTLIBS) -lcrypto -lpthread

$(BIN)/bdump-recv: $(RECV_OBJS) $(AE_CONTAINER_LIB) | $(BIN)
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(AE_CONTAINER_EXTLIBS) -lcrypto -lpthread

ALL_TARGETS += $(BIN)/bdump $(BIN)/bdump-recv
CHECK_TARGETS += tests/host/bdump-pipe.sh tests/host/bdump-net.sh
BENCH_TARGETS += bench/bdump-bench.sh

# tests/host/bdump-vm.sh: a /dev/trbuf producer run in the VM (hand-written
# restartable sequences of tests/kselftest, no libc while traced) and the
# host-side checker of its records in a bdump capture.
BDVM_OBJ := $(OBJ)/tests/host
$(BDVM_OBJ)/bdump_vm_prod: tests/host/bdump_vm_prod.c tests/kselftest/trbuf_prod.h $(OBJ)/tests/kselftest/trbuf_prod.o \
		$(OBJ)/tests/kselftest/trbuf_mode.o include/uapi/linux/trbuf.h
	$(quiet) CC $@
	$(Q)mkdir -p $(@D) && $(CC) $(KST_CFLAGS) -no-pie -o $@ $< \
		$(OBJ)/tests/kselftest/trbuf_prod.o $(OBJ)/tests/kselftest/trbuf_mode.o

$(BDVM_OBJ)/bdump_vm_check: tests/host/bdump_vm_check.c $(AE_CONTAINER_LIB) include/aetrace/container.h
	$(quiet) CC $@
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) -I$(TOP)/include/uapi -o $@ $< $(AE_CONTAINER_LDLIBS)

ALL_TARGETS += $(BDVM_OBJ)/bdump_vm_prod $(BDVM_OBJ)/bdump_vm_check
CHECK_TARGETS += tests/host/bdump-vm.sh
