#!/usr/bin/env python3
# percpu_tasks.py PCDIR SPLITDIR - whose instructions the --per-cpu
# files hold, as a reader finds them: after `# switch cpu N to PID/TID`,
# that task's; inside a `# late cpu N: PID/TID` block (a slice regenerated
# after the next task's switch line), that task's until `# back cpu N`
# or the next switch. Each task's count must equal its --split files'
# (PID.TID.PROG.FMT, one per image). Prints "TASKS BAD"; each bad task on
# stderr.
import collections
import glob
import os
import re
import sys

pcdir, spdir = sys.argv[1], sys.argv[2]
cpu_count = collections.Counter()
for path in glob.glob(os.path.join(pcdir, "cpu*.lackey")):
    owner = cur = None
    for line in open(path):
        if line.startswith("I"):
            cpu_count[cur] += 1
        elif line.startswith("# switch"):
            owner = cur = re.search(r" to \d+/(\d+) ", line).group(1)
        elif line.startswith("# late"):
            cur = re.search(r": \d+/(\d+) ", line).group(1)
        elif line.startswith("# back"):
            cur = owner
split_count = collections.Counter()
for path in glob.glob(os.path.join(spdir, "*.lackey")):
    tid = os.path.basename(path).split(".")[1]
    split_count[tid] += sum(1 for line in open(path) if line.startswith("I"))
bad = 0
for tid in set(cpu_count) | set(split_count):
    if cpu_count[tid] != split_count[tid]:
        bad += 1
        print("task %s: %d instructions in the cpu files, %d in its own" %
              (tid, cpu_count[tid], split_count[tid]), file=sys.stderr)
print(len(split_count), bad)
