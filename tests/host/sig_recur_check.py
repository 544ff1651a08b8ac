#!/usr/bin/env python3
"""Check tests/data/sig_recur.c's regenerated trace (lackey format): follow
%rsp through rec's and main's instructions (objdump of the twin) and, at each
handler entry, compare with the %rsp the handler saw (the program's output:
"rip rsp" per signal). Every signal that interrupted rec must show the same
difference; a signal placed at another level of the recursion does not.
Prints the counts; exits 1 when any is misplaced (or fewer than 20 came).

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

# the traced binary's %fs-base sequences (-fae-data) move %rsp around
# their bytes: lea -128(%rsp),%rsp; push; [mov %fs:0; store; advance];
# pop; lea 128(%rsp),%rsp. A handler entered at an instruction of one saw
# %rsp lower than the twin's by what the rest of it adds back.
window = {}
dis_p = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "--start-address=%#x" % rec_prog[0],
                        "--stop-address=%#x" % rec_prog[1], prog], capture_output=True, text=True,
                       check=True).stdout
insns = [(int(m.group(1), 16), m.group(2) + " " + m.group(3))
         for m in re.finditer(r"^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$", dis_p, re.M)]
for j, (a, text) in enumerate(insns):
    if text.startswith("lea ") and text.endswith("-0x80(%rsp),%rsp") and j + 6 < len(insns):
        for k, back in enumerate((0, 128, 136, 136, 136, 136, 128)):
            window[insns[j + k][0]] = back

sigs = [tuple(int(x, 16) for x in line.split()) for line in open(out) if line.strip()]
rel = 0
i = n = bad = nwin = 0
base = None
with open(regen) as f:
    for line in f:
        if not line.startswith("I  "):
            continue
        a = int(line[3:].split(",")[0], 16)
        if a == handler:
            if i < len(sigs) and rec_prog[0] <= sigs[i][0] < rec_prog[1]:
                n += 1
                d = sigs[i][1] + window.get(sigs[i][0], 0) - rel
                nwin += sigs[i][0] in window
                if base is None:
                    base = d
                bad += d != base
            i += 1
        else:
            rel += delta.get(a, 0)
if i != len(sigs):
    print(f"regenerated {i} handler entries, the program saw {len(sigs)} signals")
    sys.exit(1)
print(f"{n} signals in rec, {bad} misplaced, {nwin} of them in a %fs-base sequence")
sys.exit(1 if bad or n < 20 else 0)
