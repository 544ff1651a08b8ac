#!/usr/bin/env python3
# switch_points.py DIR CAPTURE - where `aetrace regen --per-cpu DIR
# CAPTURE` resumed tasks, for a capture whose slices end only at its
# markers (capmix --switch-at-signals): a SWITCH_IN right after a SIGNAL
# with its ip and sp (switched out during the delivery), or right before
# one, must be followed by the first instruction of that SIGNAL's handler
# (after the switch line; t= is the SWITCH_IN's time); one right before
# the task's EXIT by no instruction of it. A SWITCH_IN whose ip follows a
# system call instruction (syscall, int $0x80: the task was switched out
# in the call) is followed by that call first (in the twin's function of
# that name): a call completes in the slice it returns in (and exit's
# never returns); but where the SIGNAL after it names the call itself, a
# restarted one, by the handler, the call after it. (Those before a SIGRETURN are
# not checked here, but one at its SIGNAL's very place, on the same CPU:
# the --split comparison covers them.) The handler comes from outside the regenerator: the SIGNAL
# marker (schedlog print), named by the program's symbols (nm PROG) and
# found in the twin's (nm PROG.orig), PROG in the current directory.
# Prints "RESUMED BAD"; each BAD one on stderr.
import re
import subprocess
import sys
import glob
from functools import lru_cache

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
            # (before its SIGRETURN and not where the SIGNAL is, the
            # handler may have run before the switch, which then came at
            # the sigreturn: the same markers, another place)
            if nkind == "SIGRETURN" and line.split()[2:6:3] != pline.split()[2:6:3]:
                continue
            # (its call, if any, was before the SIGNAL)
            expect[ns] = ("SIGNAL", int(re.search(r"arg=(0x[0-9a-f]+)", pline).group(1), 16), None)
        elif nkind == "SIGNAL":
            # (one at the call itself restarts it: the call after the handler)
            cip = None if int(re.search(r" ip=(\S+)", nline).group(1), 16) == ip - 2 else ip
            if i + 2 < len(ms) and ms[i + 2][1] == "SWITCH_IN" and \
                    re.search(r" ip=\S+ sp=\S+", ms[i + 2][2]).group(0) == \
                    re.search(r" ip=\S+ sp=\S+", nline).group(0):
                expect[ns] = ("EXIT", None, cip)    # (switched out again in its delivery: nothing ran)
            else:
                expect[ns] = ("SIGNAL", int(re.search(r"arg=(0x[0-9a-f]+)", nline).group(1), 16),
                              cip)
        elif nkind == "EXIT":
            expect[ns] = ("EXIT", None, ip)


@lru_cache(maxsize=None)
def nm(path):
    """(address, type, name) of each symbol nm lists in path"""
    return [(int(f[0], 16), f[1], f[2]) for f in
            (x.split() for x in subprocess.run(["nm", path], capture_output=True,
                                              text=True).stdout.split("\n"))
            if len(f) == 3]


def symbols(path):
    res = {}
    for addr, _, name in nm(path):
        res.setdefault(addr, name)
        res.setdefault(name, addr)
    return res


syms = {}


def twin_entry(prog, addr):
    if prog not in syms:
        syms[prog] = (symbols(prog), symbols(prog + ".orig"))
    name = syms[prog][0].get(addr)
    return syms[prog][1].get(name) if name else None


funcs = {}


def func_of(prog, addr):
    """(name, start) of the function symbol of PROG that holds addr"""
    if prog not in funcs:
        funcs[prog] = sorted((addr, name) for addr, kind, name in nm(prog) if kind in "tTW")
    best = None
    for start, name in funcs[prog]:
        if start > addr:
            break
        best = (name, start)
    return best


@lru_cache(maxsize=None)
def call_before(prog, ip):
    """The system call (syscall, int $0x80) that ends at ip in PROG, found
    by disassembling its function up to ip: (function, start), or None"""
    fn = func_of(prog, ip - 2)
    if fn is None:
        return None
    out = subprocess.run(["objdump", "-d", "--start-address=%#x" % fn[1],
                          "--stop-address=%#x" % ip, prog],
                         capture_output=True, text=True).stdout
    last = [x for x in out.split("\n") if re.match(r"^ *[0-9a-f]+:\t", x)][-1:]
    if last and int(last[0].split(":")[0], 16) == ip - 2 and \
            re.search(r"\t(syscall|int +\$0x80)", last[0]):
        return fn
    return None


@lru_cache(maxsize=None)
def is_call_in(prog, addr, fname):
    """is the twin's instruction at addr a system call in function fname?"""
    fn = func_of(prog + ".orig", addr)
    out = subprocess.run(["objdump", "-d", "--start-address=%#x" % addr,
                          "--stop-address=%#x" % (addr + 2), prog + ".orig"],
                         capture_output=True, text=True).stdout
    return fn is not None and fn[0] == fname and \
        re.search(r"\t(syscall|int +\$0x80)", out) is not None


resumed = bad = 0
for path in sorted(glob.glob(pcdir + "/cpu*.lackey")):
    cur = None
    lines = open(path).read().split("\n")
    for i, line in enumerate(lines):
        if not line.startswith("# switch"):
            continue
        f = line.split()
        ns = int(f[-1][2:])
        # (a task still "(starting)" waits for its parent's clone: its
        # slices end late, where its regeneration begins)
        if ns not in expect or f[6] == "(starting)":
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
        fn = call_before(f[6], ip) if ip is not None else None
        if fn is not None:
            call = "its system call (in %s), then " % fn[0]
            nocall = not insns or not is_call_in(f[6], insns[0], fn[0])
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
