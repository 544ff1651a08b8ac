#!/usr/bin/env python3
"""Check tests/data/sig_recur.c's regenerated trace (lackey format): follow
%rsp through rec's and main's instructions (objdump of the twin) and, at each
handler entry, compare with the %rsp the handler saw (the program's output:
"rip rsp" per signal). Every signal that interrupted rec must show the same
difference; a signal placed at another level of the recursion does not.
Prints "signals-in-rec misplaced"; exits 1 when any is misplaced.

usage: sig_recur_check.py REGEN PROG PROGRAM-OUTPUT   (PROG.orig: the twin)
"""
import re
import subprocess
import sys

regen, prog, out = sys.argv[1:4]
twin = prog + ".orig"


def symbols(path):
    syms = {}
    for line in subprocess.run(["nm", "-S", path], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        f = line.split()
        if len(f) == 4:
            syms[f[3]] = (int(f[0], 16), int(f[0], 16) + int(f[1], 16))
    return syms


syms = symbols(twin)
rec, main, handler = syms["rec"], syms["main"], syms["on_alarm"][0]
rec_prog = symbols(prog)["rec"]     # the handler saw the traced binary's %rip

# %rsp change of each instruction of rec and main; a call to anything but
# rec returns before main goes on (its ret is not followed), so counts 0
delta = {}
dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", twin], capture_output=True, text=True,
                     check=True).stdout
for m in re.finditer(r"^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$", dis, re.M):
    a, op, args = int(m.group(1), 16), m.group(2), m.group(3)
    if not (rec[0] <= a < rec[1] or main[0] <= a < main[1]):
        continue
    d = 0
    if op.startswith("push"):
        d = -8
    elif op.startswith("pop"):
        d = 8
    elif op.startswith("ret"):
        d = 8
    elif op.startswith("call"):
        d = -8 if "<rec>" in args else 0
    elif op in ("sub", "add") and args.endswith(",%rsp"):
        d = int(args.split(",")[0].lstrip("$"), 16) * (-1 if op == "sub" else 1)
    delta[a] = d

sigs = [tuple(int(x, 16) for x in line.split()) for line in open(out) if line.strip()]
rel = 0
i = n = bad = 0
base = None
with open(regen) as f:
    for line in f:
        if not line.startswith("I  "):
            continue
        a = int(line[3:].split(",")[0], 16)
        if a == handler:
            if i < len(sigs) and rec_prog[0] <= sigs[i][0] < rec_prog[1]:
                n += 1
                d = sigs[i][1] - rel
                if base is None:
                    base = d
                bad += d != base
            i += 1
        else:
            rel += delta.get(a, 0)
if i != len(sigs):
    print(f"{n} {bad} (regenerated {i} handler entries, the program saw {len(sigs)} signals)")
    sys.exit(1)
print(n, bad)
sys.exit(1 if bad or n < 20 else 0)
