# trbuf-driver: trbuf.ko needs the built guest kernel tree, so it is not
# part of `make all` (see vm/build.mk); `make trbuf-ko` builds it through
# vm/build-module.sh into trbuf-driver/trbuf.ko.  The kselftests and the
# checkpatch suite are host-built and part of all/check.
.PHONY: trbuf-ko
trbuf-ko:
	$(Q)AE_CACHE=$(AE_CACHE) $(TOP)/vm/build-module.sh

# rollback-vm.sh boots the VM with QEMU -singlestep (about 2 minutes).
CHECK_TARGETS += tests/kselftest/checkpatch.sh tests/kselftest/rollback-vm.sh

include tests/kselftest/build.mk
