#!/usr/bin/env python3
# fork-labels.py [--label-first] FORKS: name the tasks of a run by creation
# order, so that two runs of one workload (a capture and the stepper's run
# of the twins) can be matched thread by thread although their pids differ.
# FORKS holds "parent child" lines in fork order (ae-step --forks, or the
# FORK markers of a capture). The root is "0", the k-th child of task L is
# "L.k". Prints "tid label" lines ("label tid" with --label-first).
import sys

args = sys.argv[1:]
label_first = bool(args) and args[0] == "--label-first"
if label_first:
    args = args[1:]
if len(args) != 1:
    sys.exit("usage: fork-labels.py [--label-first] FORKS")
pairs = [l.split() for l in open(args[0]) if l.strip()]
children, kids = {}, set()
for p, c in pairs:
    children.setdefault(p, []).append(c)
    kids.add(c)
roots = [p for p, _ in pairs if p not in kids]
label = {roots[0]: "0"} if roots else {}
todo = list(label)
while todo:
    p = todo.pop()
    for k, c in enumerate(children.get(p, [])):
        label[c] = "%s.%d" % (label[p], k)
        todo.append(c)
for t, l in label.items():
    print(*((l, t) if label_first else (t, l)))
