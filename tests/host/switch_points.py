#!/usr/bin/env python3
# switch_points.py DIR CAPTURE:PROG... - where `aetrace regen --per-cpu DIR`
# resumed tasks. Each switch line of a task's second or later slice must be
# followed by no instruction of it (it was killed there, or ended in its
# exit) or by a signal handler's first instruction: the capture cuts slices
# only where a task took a signal or ended (capmix --switch-at-signals).
# The handlers come from outside the regenerator: the SIGNAL markers of
# each standalone CAPTURE (schedlog print), named by PROG's symbols and
# found in PROG.orig's. Prints "RESUMED BAD"; BAD lines on stderr.
import re
import subprocess
import sys
import glob

pcdir, pairs = sys.argv[1], sys.argv[2:]
entries = set()
for pair in pairs:
    cap, prog = pair.split(":")
    out = subprocess.run(["schedlog", "print", cap], capture_output=True, text=True,
                         check=True).stdout
    handlers = {int(m.group(1), 16) for m in re.finditer(r"SIGNAL .* arg=(0x[0-9a-f]+)", out)}
    names = set()
    for line in subprocess.run(["nm", prog], capture_output=True, text=True).stdout.split("\n"):
        f = line.split()
        if len(f) == 3 and int(f[0], 16) in handlers:
            names.add(f[2])
    for line in subprocess.run(["nm", prog + ".orig"], capture_output=True, text=True).stdout.split("\n"):
        f = line.split()
        if len(f) == 3 and f[2] in names:
            entries.add(int(f[0], 16))
# (time, task, first instruction after it) of every switch line
ev = []
for path in sorted(glob.glob(pcdir + "/cpu*.lackey")):
    cur = None
    for line in open(path):
        if line.startswith("# switch"):
            f = line.split()
            cur = [int(f[-1][2:]), f[5], None]
            ev.append(cur)
        elif line.startswith("I") and cur is not None and cur[2] is None:
            cur[2] = int(line[3:].split(",")[0], 16)
resumed = bad = 0
seen = set()
for t, task, addr in sorted(ev):
    if task in seen and addr is not None:
        resumed += 1
        if addr not in entries:
            bad += 1
            print("switch to %s at t=%d: its first instruction is at %#x, no handler's entry"
                  % (task, t, addr), file=sys.stderr)
    seen.add(task)
print(resumed, bad)
