#!/usr/bin/env python3
# data_cmp.py REGEN LACKEY FROM [--stack-offset]: compare a regenerated
# data trace (aetrace regen --format=lackey of a -fae-data program) with
# valgrind lackey's --trace-mem=yes log of the twin, from the first
# execution of address FROM (hex) on.
#
# Instruction records must be equal one for one; every instruction's data
# records equal in kind (L/S/M), size and address. VEX runs a rep string
# instruction with count N>0 as N+1 iterations, the last touching nothing:
# an instruction record that repeats the previous one's address without
# data records is dropped from the lackey side.
# --stack-offset: lackey's run is another execution whose stack valgrind
# places elsewhere (0x1fff000000 instead of 0x7ffffffde000): a stack
# address (>= 0x7f0000000000 in the regenerated trace) must then differ
# from lackey's by one offset, the same for the whole run; all other
# addresses must be equal. Without it every address must be equal (the
# same-run comparison).
# --rebase-at=HEX[,HEX]: signal handler entries: valgrind builds its own
# signal frames, so a handler's stack has its own offset, learnt at its
# first stack access; an address at an outer level's offset goes back to
# that level (the handler returned or longjmp'd out).
# --entry-sp=HEX: the process-entry %rsp of the regenerated run; accesses
# at or above it (argv, environment, auxv and the bytes they point to,
# which valgrind lays out differently) are compared in kind and size only,
# and counted apart.
# --dead-pops=FILE: the twin's pops whose register the straight-line code
# after them overwrites unread (hex addresses, one a line:
# tests/host/dead_pops.py): valgrind's optimiser drops such a load (the
# value is dead; sqlite3's stack-argument cleanup, `pop %r11` before
# `mov 0x30(%rsp),%r11`), so at such a pop lackey may lack the one 8-byte
# load the regeneration has; counted apart (the native stepper, which
# sees every load, has them all).
# Exit 0 and "identical: ..." or exit 1 and the first difference.
import sys

STACK = 0x7f0000000000


def parse(path):
    recs = []
    cur = None
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("I  "):
                a, s = line[3:].split(",")
                cur = [int(a, 16), int(s), []]
                recs.append(cur)
            elif len(line) > 4 and line[0] == " " and line[1] in "LSM" and line[2] == " ":
                if cur is not None:
                    a, s = line[3:].split(",")
                    cur[2].append((line[1], int(a, 16), int(s)))
    return recs


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    stack_off = "--stack-offset" in sys.argv
    entry_sp = None
    for a in sys.argv[1:]:
        if a.startswith("--entry-sp="):
            entry_sp = int(a.split("=", 1)[1], 16)
    loose = 0
    rebase = set()
    for a in sys.argv[1:]:
        if a.startswith("--rebase-at="):
            rebase = {int(x, 16) for x in a.split("=", 1)[1].split(",") if x}
    outer = []
    pops, dead = set(), 0
    for a in sys.argv[1:]:
        if a.startswith("--dead-pops="):
            with open(a.split("=", 1)[1]) as f:
                pops = {int(x, 16) for x in f.read().split()}
    if len(args) != 3:
        print("usage: data_cmp.py REGEN LACKEY FROM [--stack-offset]", file=sys.stderr)
        return 2
    frm = int(args[2], 16)
    r, l = parse(args[0]), parse(args[1])
    ri = next((i for i, x in enumerate(r) if x[0] == frm), None)
    li = next((i for i, x in enumerate(l) if x[0] == frm), None)
    if ri is None or li is None:
        print("%s never executes %x" % (args[0] if ri is None else args[1], frm))
        return 1
    delta = None
    n = 0
    cnt = {"L": 0, "S": 0, "M": 0}
    i, j = ri, li
    while i < len(r) and j < len(l):
        a, b = r[i], l[j]
        if a[0] != b[0] and not b[2] and j > 0 and l[j - 1][0] == b[0]:
            j += 1
            continue
        where = "regenerated instruction %d (%x)" % (i - ri, a[0])
        if a[0] in rebase and delta is not None:
            outer.append(delta)
            delta = None
        if a[0] != b[0] or a[1] != b[1]:
            print("instruction differs at %s: lackey %x,%d" % (where, b[0], b[1]))
            return 1
        if [(k, s) for k, _, s in a[2]] != [(k, s) for k, _, s in b[2]]:
            if not b[2] and j > 0 and l[j - 1][0] == b[0]:
                j += 1
                continue
            if a[0] in pops and not b[2] and [(k, s) for k, _, s in a[2]] == [("L", 8)]:
                dead += 1
                n += 1
                i += 1
                j += 1
                continue
            print("data records differ at %s: regen %s, lackey %s" % (
                where, " ".join("%s %x,%d" % x for x in a[2]),
                " ".join("%s %x,%d" % x for x in b[2])))
            return 1
        for (k, x, s), (_, y, _) in zip(a[2], b[2]):
            if stack_off and entry_sp is not None and x >= entry_sp:
                loose += 1
            elif stack_off and x >= STACK:
                if delta is None:
                    delta = x - y
                if x - y != delta and x - y in outer:
                    while outer and outer[-1] != x - y:
                        outer.pop()
                    delta = outer.pop()
                if x - y != delta:
                    print("stack address differs at %s: regen %s %x, lackey %x (offset %x, not %x)" %
                          (where, k, x, y, x - y, delta))
                    return 1
            elif x != y:
                print("address differs at %s: regen %s %x,%d, lackey %x" % (where, k, x, s, y))
                return 1
            cnt[k] += 1
        n += 1
        i += 1
        j += 1
    while j < len(l) and not l[j][2] and l[j][0] == l[j - 1][0]:
        j += 1
    if i != len(r) or j != len(l):
        print("lengths differ: regen has %d more records, lackey %d" % (len(r) - i, len(l) - j))
        return 1
    print("identical: %d instructions, %d data records (L %d, S %d, M %d)%s%s%s" % (
        n, sum(cnt.values()), cnt["L"], cnt["S"], cnt["M"],
        ", stack offset %x" % delta if delta is not None else "",
        "; %d process-entry area accesses compared in kind and size" % loose if loose else "",
        "; %d dead pop loads valgrind dropped" % dead if dead else ""))
    return 0


sys.exit(main())
