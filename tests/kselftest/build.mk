# tests/kselftest: the /dev/trbuf kselftests, built on the host and run in
# the VM by tests/kselftest/run-in-vm.sh.  Included from trbuf-driver/build.mk.
KST_OBJ := $(OBJ)/tests/kselftest
# The kernel's own kselftest harness (kselftest_harness.h, kselftest.h),
# taken from Debian's linux-source-6.1 at build time like the kernel's own
# selftests do (no copies in the repository).
KST_SRC := /usr/src/linux-source-6.1.tar.xz
KST_INC := $(KST_OBJ)/ksft-include
# Traced code in the tests must not touch r15 (invariant 1); the seqtab
# holds 32-bit absolute addresses, so no PIE.
KST_CFLAGS := -O2 -g -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
	-Wno-sign-compare -ffixed-r15 -fno-stack-protector -fno-pie \
	-fcf-protection=none -D_GNU_SOURCE \
	-I$(TOP)/include/uapi -I$(TOP)/include -Iinstrument/runtime \
	-Itests/kselftest -I$(KST_INC)
KST_RT_CFLAGS := -O2 -g -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
	-ffixed-r15 -ffreestanding -fno-stack-protector -fno-builtin \
	-fno-asynchronous-unwind-tables -fno-pie -fcf-protection=none \
	-I$(TOP)/include/uapi -I$(TOP)/include -Iinstrument/runtime

KST_HDRS := tests/kselftest/trbuf_prod.h \
	include/uapi/linux/trbuf.h instrument/runtime/sys.h

$(KST_INC)/kselftest_harness.h: | $(KST_OBJ)
	$(Q)[ -f $(KST_SRC) ] || { echo "$(KST_SRC) missing: run scripts/deps.sh kernel" >&2; exit 1; }
	$(quiet) TAR $@
	$(Q)rm -rf $(KST_INC).tmp && mkdir -p $(KST_INC).tmp
	$(Q)tar -xf $(KST_SRC) -C $(KST_INC).tmp --strip-components=4 \
		linux-source-6.1/tools/testing/selftests/kselftest_harness.h \
		linux-source-6.1/tools/testing/selftests/kselftest.h
	$(Q)rm -rf $(KST_INC) && mv $(KST_INC).tmp $(KST_INC)

$(KST_OBJ)/trbuf_test.o: tests/kselftest/trbuf_test.c $(KST_HDRS) \
		$(KST_INC)/kselftest_harness.h | $(KST_OBJ)
	$(quiet) CC $@
	$(Q)$(CC) $(KST_CFLAGS) -c -o $@ $<

$(KST_OBJ)/trbuf_prod.o: tests/kselftest/trbuf_prod.S | $(KST_OBJ)
	$(quiet) AS $@
	$(Q)$(CC) $(KST_CFLAGS) -c -o $@ $<

$(KST_OBJ)/trbuf_mode.o: instrument/runtime/trbuf_mode.c $(KST_HDRS) | $(KST_OBJ)
	$(quiet) CC $@
	$(Q)$(CC) $(KST_RT_CFLAGS) -c -o $@ $<

$(KST_OBJ)/trbuf_test: $(KST_OBJ)/trbuf_test.o $(KST_OBJ)/trbuf_prod.o \
		$(KST_OBJ)/trbuf_mode.o
	$(quiet) LD $@
	$(Q)$(CC) -no-pie -o $@ $^

$(KST_OBJ):
	$(Q)mkdir -p $@

# Without the kernel source (scripts/deps.sh kernel) the kselftests are not
# built; tests/kselftest/run-in-vm.sh then fails saying so.
ifneq ($(wildcard $(KST_SRC)),)
ALL_TARGETS += $(KST_OBJ)/trbuf_test
endif
