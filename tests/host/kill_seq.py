#!/usr/bin/env python3
# kill_seq.py AETRACE TRACE_MUTATE PROG CAP EXIT WINDOW [FIRST]:
# kills moved into witness stubs (tests/host/kill-seq.sh). CAP is a
# capture of PROG (aecc-built) that died by a fault, its EXIT marker
# index EXIT, all in one sub-buffer. For every witness byte the
# regeneration reads (AETRACE_DEBUG's "witness W at P, offset O") in the
# last WINDOW bytes before the EXIT, and for the first occurrence of
# every stub anywhere (FIRST: 1), the EXIT is moved onto each
# instruction of the stub that wrote it (PROG's `mov $W,(%r15); lea
# w(%r15),%r15`, found from its owner: the branch whose target it is,
# else the instruction before it, mapped to P by `aetrace map-lackey`),
# at offset O, its %rsp unknown (0), and the data cut at O: the task
# died there, the byte not yet committed. Each such trace must be the
# same as the one killed right after the stub (at its end, offset
# O + w, the byte written; the twin's padding before the next
# instruction left out), and that one the full regeneration's
# prefix ending with P: the task ran up to P's visit that wrote the
# witness, not an instruction more or less. That holds too where both
# sides of a branch reach the kill's twin address through stubs (two
# edges into one instruction): the marker's own ip says whose stub it
# was. Before 2026-12-02 such a trace ended at the branch with a warning
# ("ambiguous"): that is a failure now, as is any other error or
# difference. Prints "# ..." lines and a summary "cases N ambiguous A
# failed F"; exit 1 if any failed.
import os
import re
import subprocess
import sys
import tempfile

INSN = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$")
# the warning of a kill left between two sides (counted, and failed: the
# stub its ip is in tells them apart)
AMBIGUOUS = ("both sides of the branch may reach its ip before a trace byte",
             "too far down the branch's sides to tell which one ran")
STORE = re.compile(r"^\$0x([0-9a-f]+),\(%r15\)$")
LEA = re.compile(r"^0x([0-9a-f]+)\(%r15\),%r15$")


def insns(prog):
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", prog],
                         capture_output=True, text=True, check=True).stdout
    res = []
    for line in out.splitlines():
        m = INSN.match(line)
        if m:
            res.append((int(m.group(1), 16), m.group(2), m.group(3)))
    return res


def stubs(prog):
    """(start, second, end, id, width, owner prog address) per stub"""
    code = insns(prog)
    targets = {}
    for a, mn, ops in code:
        if mn.startswith("j") and mn != "jmp" and re.match(r"^[0-9a-f]+ <", ops):
            targets[int(ops.split()[0], 16)] = a
    res = []
    for i in range(1, len(code) - 2):
        a, mn, ops = code[i]
        m = STORE.match(ops)
        if not m or mn not in ("movb", "movw") or code[i + 1][1] != "lea":
            continue
        m2 = LEA.match(code[i + 1][2])
        if not m2:
            continue
        owner = targets.get(a, code[i - 1][0])
        res.append((a, code[i + 1][0], code[i + 2][0], int(m.group(1), 16),
                    int(m2.group(1), 16), owner))
    return res


def twin_of(aetrace, prog, addrs):
    """map-lackey each prog address to its twin address (None: not one)"""
    res = {}
    for a in addrs:
        out = subprocess.run([aetrace, "map-lackey", prog], input="I  %x,1\n" % a,
                             capture_output=True, text=True).stdout.split()
        res[a] = int(out[1].split(",")[0], 16) if len(out) == 2 else None
    return res


def main():
    aetrace, tm, prog, cap, exit_mk, window = sys.argv[1:7]
    first = len(sys.argv) > 7 and sys.argv[7] == "1"
    window = int(window)
    env = dict(os.environ, AETRACE_DEBUG="1")
    r = subprocess.run([aetrace, "regen", cap, prog], capture_output=True, text=True, env=env)
    if r.returncode:
        print("# the full regeneration failed: " + r.stderr.strip()[-300:])
        return 1
    full = r.stdout.splitlines()
    wit = [(int(m.group(1)), int(m.group(2), 16), int(m.group(3)))
           for m in re.finditer(r"witness (\d+) at 0x([0-9a-f]+), offset (\d+)", r.stderr)]
    if not wit:
        print("# no witness bytes")
        return 1
    st = stubs(prog)
    pads = {a for a, mn, ops in insns(prog + ".orig")
            if mn.startswith("nop") or (mn, ops) == ("xchg", "%ax,%ax") or
            (mn in ("cs", "data16") and "nop" in ops)}
    tw = twin_of(aetrace, prog, sorted({s[5] for s in st}))
    by_key = {}
    for s in st:
        if tw.get(s[5]):
            by_key.setdefault((tw[s[5]], s[3]), []).append(s)
    end = wit[-1][2] + 1
    seen = set()
    cases = []
    for w, p, o in wit:
        k = (p, w)
        if o >= end - window or (first and k not in seen):
            cases.append((w, p, o))
        seen.add(k)
    tmp = tempfile.mkdtemp(prefix="kill_seq.")
    nfail = ncase = nskip = namb = 0

    def killed(o, ip, name):
        a, b, c = (os.path.join(tmp, name + x) for x in ("1", "2", "3"))
        for args in (["--marker", cap, a, exit_mk, "offset", str(o)],
                     ["--marker", a, b, exit_mk, "ip", hex(ip)],
                     ["--marker", b, c, exit_mk, "sp", "0"],
                     ["--data-cut", c, a, str(o)]):
            subprocess.run([tm] + args, check=True, capture_output=True)
        r = subprocess.run([aetrace, "regen", a, prog], capture_output=True, text=True)
        # (the cut leaves the END chunk's counts the whole capture's)
        r.stderr = "".join(x for x in r.stderr.splitlines(True) if "END chunk ending" not in x)
        return r

    for w, p, o in cases:
        ss = by_key.get((p, w), [])
        if len(ss) != 1:
            nskip += 1
            continue
        start, second, stop, _, width, _ = ss[0]
        ncase += 1
        ref = killed(o + width, stop, "ref")
        lines = ref.stdout.splitlines()
        # (the stub's end may be the padding before the next instruction:
        # the twin's ran there, not in the stub)
        while lines and lines[-1].startswith("I") and \
                int(lines[-1].split()[1].split(",")[0], 16) in pads:
            lines.pop()
        ref.stdout = "".join(x + "\n" for x in lines)
        last = [x for x in lines if x.startswith("I")][-1:] if lines else []
        bad = []
        if ref.returncode or ref.stderr or lines != full[:len(lines)] or \
           not last or int(last[0].split()[1].split(",")[0], 16) != p:
            bad.append("killed after the stub: not the full trace up to %#x (%s)" %
                       (p, ref.stderr.strip()[-200:]))
        amb = 0
        for ip in (start, second):
            r = killed(o, ip, "k")
            if not r.returncode and any(x in r.stderr for x in AMBIGUOUS):
                amb = 1
            if r.returncode or r.stderr or r.stdout != ref.stdout:
                bad.append("killed at %#x: %s" % (ip, r.stderr.strip()[-200:] or
                                                   "%d lines, not %d" % (r.stdout.count("\n"),
                                                                         len(lines))))
        namb += amb
        if bad:
            nfail += 1
            if nfail <= 8:
                print("# witness %d of %#x at offset %d (stub %#x): %s" % (w, p, o, start,
                                                                          "; ".join(bad)))
    print("# stubs: %d, cases: %d, not one stub: %d, ended at the branch (ambiguous): %d, failed: %d" %
          (len(st), ncase, nskip, namb, nfail))
    print("cases %d ambiguous %d failed %d" % (ncase, namb, nfail))
    subprocess.run(["rm", "-rf", tmp])
    return 1 if nfail or namb or not ncase else 0


if __name__ == "__main__":
    sys.exit(main())
