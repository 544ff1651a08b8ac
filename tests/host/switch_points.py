#!/usr/bin/env python3
# switch_points.py DIR CAPTURE - where `aetrace regen --per-cpu DIR
# CAPTURE` resumed tasks, for a capture whose slices end only at its
# markers (capmix --switch-at-signals): a SWITCH_IN right after a SIGNAL
# with its ip and sp (switched out during the delivery), or right before
# one, must be followed by the first instruction of that SIGNAL's handler
# (after the switch line; t= is the SWITCH_IN's time); one right before
# the task's EXIT by no instruction of it. A SWITCH_IN whose ip follows a
# syscall instruction (the task was switched out in the call) is
# followed by that call first: a call completes in the slice it returns
# in (and exit's never returns). (Those before a SIGRETURN are
# not checked here: the --split comparison covers them.) The handler comes from outside the regenerator: the SIGNAL
# marker (schedlog print), named by the program's symbols (nm PROG) and
# found in the twin's (nm PROG.orig), PROG in the current directory.
# Prints "RESUMED BAD"; each BAD one on stderr.
import re
import subprocess
import sys
import glob

pcdir, capture = sys.argv[1], sys.argv[2]
out = subprocess.run(["schedlog", "print", capture], capture_output=True, text=True,
                     check=True).stdout
# per task, its markers in time order (but SUBBUF and ROLLBACK, which
# say nothing of where it is: a neighbour's kind is what decides)
marks = {}
for line in out.split("\n"):
    f = line.split()
    if len(f) < 7 or f[4] in ("SUBBUF", "ROLLBACK"):
        continue
    ns = round(float(f[1]) * 1e9)
    marks.setdefault(f[3], []).append((ns, f[4], line))
expect = {}     # SWITCH_IN time -> ("SIGNAL", handler) or ("EXIT", None), ip
for task, ms in marks.items():
    ms.sort()
    for i, (ns, kind, line) in enumerate(ms):
        if kind != "SWITCH_IN" or " ip=0 " in line or i + 1 == len(ms):
            continue
        regs = re.search(r" ip=\S+ sp=\S+", line).group(0)
        ip = int(re.search(r" ip=(\S+)", line).group(1), 16)
        pkind, pline = ms[i - 1][1], ms[i - 1][2]
        nkind, nline = ms[i + 1][1], ms[i + 1][2]
        # switched out while its SIGNAL was delivered (the same ip and
        # sp), or where it took the next one: its handler comes next
        if pkind == "SIGNAL" and re.search(r" ip=\S+ sp=\S+", pline).group(0) == regs:
            # (its call, if any, was before the SIGNAL)
            expect[ns] = ("SIGNAL", int(re.search(r"arg=(0x[0-9a-f]+)", pline).group(1), 16), None)
        elif nkind == "SIGNAL" and i + 2 < len(ms) and ms[i + 2][1] == "SWITCH_IN" and \
                re.search(r" ip=\S+ sp=\S+", ms[i + 2][2]).group(0) == regs:
            expect[ns] = ("EXIT", None, ip)     # (switched out again in its delivery: nothing ran)
        elif nkind == "SIGNAL":
            expect[ns] = ("SIGNAL", int(re.search(r"arg=(0x[0-9a-f]+)", nline).group(1), 16), ip)
        elif nkind == "EXIT":
            expect[ns] = ("EXIT", None, ip)


def symbols(path):
    res = {}
    for line in subprocess.run(["nm", path], capture_output=True, text=True).stdout.split("\n"):
        f = line.split()
        if len(f) == 3:
            res.setdefault(int(f[0], 16), f[2])
            res.setdefault(f[2], int(f[0], 16))
    return res


syms = {}


def twin_entry(prog, addr):
    if prog not in syms:
        syms[prog] = (symbols(prog), symbols(prog + ".orig"))
    name = syms[prog][0].get(addr)
    return syms[prog][1].get(name) if name else None


def syscall_at(path, start):
    out = subprocess.run(["objdump", "-d", "--start-address=%#x" % start,
                          "--stop-address=%#x" % (start + 2), path],
                         capture_output=True, text=True).stdout
    return re.search(r"\tsyscall", out) is not None


resumed = bad = 0
for path in sorted(glob.glob(pcdir + "/cpu*.lackey")):
    cur = None
    lines = open(path).read().split("\n")
    for i, line in enumerate(lines):
        if not line.startswith("# switch"):
            continue
        f = line.split()
        ns = int(f[-1][2:])
        if ns not in expect:
            continue
        resumed += 1
        insns = []
        late = False    # in a `# late` block: another task's, until `# back`
        for nxt in lines[i + 1:]:
            if nxt.startswith("# switch") or len(insns) == 2:
                break
            if nxt.startswith("# late") or nxt.startswith("# back"):
                late = nxt.startswith("# late")
            elif nxt.startswith("I") and not late:
                insns.append(int(nxt[3:].split(",")[0], 16))
        kind, handler, ip = expect[ns]
        # (switched out in a system call: the call, in the twin, first)
        call, nocall = "", False
        if ip is not None and syscall_at(f[6], ip - 2):
            call = "its system call, then "
            nocall = not insns or not syscall_at(f[6] + ".orig", insns[0])
            insns = insns[1:]
        first = insns[0] if insns else None
        want = twin_entry(f[6], handler) if kind == "SIGNAL" else None
        if nocall or first != want or (kind == "SIGNAL" and want is None):
            bad += 1
            print("%s: switch to %s at t=%d: %sfirst instruction%s %s, the %s wants %s%s" %
                  (path, f[5], ns, "no system call, " if nocall else "",
                   " after the call" if call and not nocall else "",
                   hex(first) if first is not None else "none", kind, call,
                   hex(want) if want is not None else "none"), file=sys.stderr)
print(resumed, bad)
