# The guest kernel and the QEMU VM (vm/README.md).  Not part of `make all`:
# a cold kernel build takes minutes; it is cached in $(AE_CACHE).
#   make kernel        build (or switch the cached tree to) the current key
#   make kernel-baseline  the unpatched kernel (same source and config, no
#                      patches, its own tree): the selftests' reference
#   make vm            kernel + QEMU: everything vm/run needs
#   make check-kernel  + trbuf.ko, then tests/kselftest/run-in-vm.sh in the VM
#                      and the kernel's own selftests beside a traced
#                      workload (tests/kselftest/upstream-vm.sh)
.PHONY: kernel kernel-baseline vm check-kernel

kernel:
	$(Q)$(DEPS) kernel
	$(Q)AE_CACHE='$(AE_CACHE)' $(TOP)/vm/build-kernel.sh

kernel-baseline:
	$(Q)$(DEPS) kernel
	$(Q)AE_CACHE='$(AE_CACHE)' $(TOP)/vm/build-kernel.sh --baseline

vm: kernel
	$(Q)$(DEPS) vm

check-kernel: vm all
	$(Q)AE_CACHE='$(AE_CACHE)' $(TOP)/tests/run-all.sh tests/host/kselftest-vm.sh \
		tests/kselftest/upstream-vm.sh

CHECK_TARGETS += tests/host/vm-boot.sh tests/host/kselftest-vm.sh \
	tests/kselftest/upstream-vm.sh tests/host/anypath-vm.sh
