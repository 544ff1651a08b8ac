#!/usr/bin/env python3
# vc_kill_check.py SPLITDIR LOAD LOAD2 ON_SEGV CELLS ROUNDS NCHILD:
# tests/data/vc_kill.c's regenerated tasks (aetrace regen --format=lackey
# --split), against what the program did. LOAD, LOAD2: the twin
# addresses of pick()'s and pick_blocked()'s load of the pointer,
# ON_SEGV: the handler's entry, CELLS: the array's address. NCHILD
# children's traces must end right before LOAD (the load faulted), NCHILD
# more with LOAD2 and its load of the pointer (the record after it
# faulted); in the parent, every handler entry must
# follow the instruction before LOAD, and its loads from cells must be
# those of the rounds that loaded a good pointer (round i % 3 != 1), in
# order. Prints a summary; exit 1 on a mismatch.
import os
import sys


def records(path):
    for line in open(path):
        kind = line[:2].strip()
        if kind in ("I", "L", "S", "M"):
            a, size = line[3:].split(",")
            yield kind, int(a, 16), int(size)


def main():
    split, load, load2, on_segv, cells, rounds, nchild = sys.argv[1:8]
    load, load2 = int(load, 16), int(load2, 16)
    on_segv, cells = int(on_segv, 16), int(cells, 16)
    rounds, nchild = int(rounds), int(nchild)
    before = after = 0
    children, parent = [], None
    for f in sorted(os.listdir(split)):
        recs = list(records(os.path.join(split, f)))
        if any(k == "I" and a == on_segv for k, a, _ in recs):
            parent = (f, recs)
        else:
            children.append((f, recs))
    bad = []
    for f, recs in children:
        ins = [(a, s) for k, a, s in recs if k == "I"]
        if ins and ins[-1][0] + ins[-1][1] == load:
            before += 1
        elif ins and ins[-1][0] == load2 and recs[-1][0] == "L":
            after += 1
        else:
            bad.append("child %s ends at %s, not at %#x or %#x" %
                       (f, "%#x" % ins[-1][0] if ins else "nothing", load, load2))
    if (before, after) != (nchild, nchild):
        bad.append("%d children end before the load, %d with it, not %d each" %
                   (before, after, nchild))
    if parent is None:
        bad.append("no task entered the handler")
        print("; ".join(bad))
        return 1
    f, recs = parent
    prev, entries, got = None, 0, []
    for k, a, s in recs:
        if k == "I":
            if a == on_segv:
                entries += 1
                if prev is None or prev[0] + prev[1] != load:
                    bad.append("handler entry %d after %s, not before %#x" %
                               (entries, "%#x" % prev[0] if prev else "nothing", load))
            prev = (a, s)
        elif k == "L" and cells <= a < cells + 8 * rounds:
            got.append((a - cells) // 8)
    want = [i for i in range(rounds) if i % 3 != 1]
    if entries != rounds // 2:
        bad.append("%d handler entries, the program caught %d faults" % (entries, rounds // 2))
    if got != want:
        bad.append("loads from cells %s, the program made %s" % (got[:12], want[:12]))
    if bad:
        print("; ".join(bad[:4]))
        return 1
    print("%d children end before the faulting load, %d with it (its record faulted), "
          "the parent's %d handler entries follow it, its %d loads from cells are the program's" %
          (before, after, entries, len(got)))
    return 0


sys.exit(main())
