#!/usr/bin/env python3
# dead_pops.py PROG: the addresses (hex, one a line) of PROG's `pop %reg`
# instructions whose register the straight-line code after them writes
# whole before reading it, up to the next jump, call, return or system
# call: the loads valgrind's optimiser drops (its block ends there, and a
# register put that a later put replaces unread is dead, and so is the load
# that fed it). For tests/host/data_cmp.py --dead-pops. Conservative: an
# instruction this does not understand ends the look.
import re
import subprocess
import sys

# each 64-bit register: its 32-bit name (a write of it zero-extends:
# the whole register) and all its names
REGS = {}
for q, d, w, b in (("rax", "eax", "ax", "al"), ("rbx", "ebx", "bx", "bl"),
                   ("rcx", "ecx", "cx", "cl"), ("rdx", "edx", "dx", "dl"),
                   ("rsi", "esi", "si", "sil"), ("rdi", "edi", "di", "dil"),
                   ("rbp", "ebp", "bp", "bpl")):
    REGS[q] = (d, {q, d, w, b, q[1] + "h"})
for n in range(8, 16):
    REGS["r%d" % n] = ("r%dd" % n, {"r%d" % n, "r%dd" % n, "r%dw" % n, "r%db" % n})
# instructions whose last operand is only written
WRITE = re.compile(r"^(mov|movabs|lea|movz[bw][lq]?|movs[bwl][lq]?|movslq|pop|movq|movd)[lq]?$")
ZERO = re.compile(r"^(xor|sub)[lq]?$")	# xor %eax,%eax: a write, read in name only
END = re.compile(r"^(j|call|ret|syscall|int|hlt|ud2|rep|loop|leave|enter|cpuid|xbegin|bnd|notrack)")


def names(ops):
    return re.findall(r"%([a-z0-9]+)", ops)


def dead(reg, rest):
    d32, alias = REGS[reg]
    for mnem, ops in rest:
        if END.match(mnem):
            return False
        if not any(r in alias for r in names(ops)):
            continue
        args = [a.strip() for a in ops.split(",")]
        whole = args[-1] in ("%" + reg, "%" + d32)
        if ZERO.match(mnem) and len(args) == 2 and args[0] == args[1] and whole:
            return True
        if any(r in alias for r in names(",".join(args[:-1]))) or "(" in args[-1]:
            return False	# read: a source, or in an address
        return bool(WRITE.match(mnem)) and whole
    return False


def main():
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", sys.argv[1]],
                         capture_output=True, text=True, check=True).stdout
    insns = []
    for line in out.splitlines():
        m = re.match(r"\s+([0-9a-f]+):\s+(\S+)\s*(.*)", line)
        if m:
            insns.append((int(m.group(1), 16), m.group(2), m.group(3).split("#")[0].strip()))
        elif line.strip() == "" or line.endswith(">:"):
            insns.append(None)	# a symbol's start: the look ends there
    for k, x in enumerate(insns):
        if x is None or x[1] != "pop":
            continue
        regs = names(x[2])
        if len(regs) != 1 or regs[0] not in REGS:
            continue
        rest = []
        for y in insns[k + 1:k + 60]:
            if y is None:
                break
            rest.append((y[1], y[2]))
        if dead(regs[0], rest):
            print("%x" % x[0])


if __name__ == "__main__":
    main()
