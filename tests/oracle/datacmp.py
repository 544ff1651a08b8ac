#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""datacmp: compare two lackey-format data traces (I/L/S/M records).

usage: datacmp.py [--stack-delta] [--no-rep-fix] [--from ADDR] [--skip-range LO-HI]... A B

Prints the counts per kind of both traces and the first difference (record
number after normalisation, both lines with their line numbers); exit 0 when
equal, 1 on a difference, 2 on bad input (file, line number and text named).

Normalisation (both sides, see README "lackey data conventions"): valgrind's
`==pid==` lines are skipped; an I line with no data records that directly
follows an I line of the same address that had data is dropped (VEX's last
rep iteration, which only tests rcx == 0). --no-rep-fix keeps them.
--stack-delta: addresses may differ by one constant (valgrind's stack is
elsewhere): the first differing address pair fixes the delta, every later
differing pair must have the same one; the number of such records is shown.
A first pair closer than 16 MiB is a difference, not a delta.
--from ADDR (hex): both traces are compared from their first I at ADDR.
--skip-range LO-HI (hex, [LO, HI)): every instruction in the range is
dropped from both traces with its data records (a thread's pthread_join,
which waits a schedule-dependent number of times).
"""
import re
import sys

MIN_DELTA = 1 << 24    # smaller differences are never a stack relocation
REC = re.compile(r'^(?:I  |  ?([LSM]) )([0-9a-f]+),([0-9]+)$')


def load(path, rep_fix, start=None, skips=()):
    """Returns [(lineno, kind, addr, size, text)] or exits 2 on bad input."""
    out = []
    skipping = False
    try:
        f = open(path, encoding='ascii', errors='replace')
    except OSError as e:
        sys.exit(f'datacmp: {path}: {e.strerror}')
    with f:
        for n, line in enumerate(f, 1):
            line = line.rstrip('\n')
            if line.startswith('==') or not line:
                continue
            m = REC.match(line)
            if not m:
                print(f'datacmp: {path}:{n}: not a lackey record: {line[:80]!r}',
                      file=sys.stderr)
                sys.exit(2)
            kind = m.group(1) or 'I'
            rec = (n, kind, int(m.group(2), 16), int(m.group(3)), line)
            if kind != 'I' and not out:
                print(f'datacmp: {path}:{n}: data record before any I line',
                      file=sys.stderr)
                sys.exit(2)
            if kind == 'I':
                skipping = any(lo <= rec[2] < hi for lo, hi in skips)
            if not skipping:
                out.append(rec)
    if start is not None:
        first = next((i for i, r in enumerate(out)
                      if r[1] == 'I' and r[2] == start), None)
        if first is None:
            print(f'datacmp: {path}: no I line at {start:#x} (--from)',
                  file=sys.stderr)
            sys.exit(2)
        out = out[first:]
    if rep_fix:
        out = _rep_fix(out)
    return out


def _rep_fix(recs):
    """Drops dataless I lines that follow an I of the same address with data."""
    res = []
    prev_i_addr = None
    prev_had_data = False
    for i, r in enumerate(recs):
        if r[1] == 'I':
            has_data = i + 1 < len(recs) and recs[i + 1][1] != 'I'
            if not has_data and prev_had_data and r[2] == prev_i_addr:
                prev_had_data = False
                continue
            prev_i_addr = r[2]
            prev_had_data = has_data
        res.append(r)
    return res


def counts(recs):
    c = {'I': 0, 'L': 0, 'S': 0, 'M': 0}
    for r in recs:
        c[r[1]] += 1
    return ' '.join(f'{k}={v}' for k, v in c.items())


def main(argv):
    stack_delta = False
    rep_fix = True
    args = []
    start = None
    skips = []
    it = iter(argv[1:])
    for a in it:
        if a == '--from':
            try:
                start = int(next(it), 16)
            except (StopIteration, ValueError):
                sys.exit('datacmp: --from needs a hex address')
        elif a == '--skip-range':
            try:
                lo, hi = (int(x, 16) for x in next(it).split('-'))
            except (StopIteration, ValueError):
                sys.exit('datacmp: --skip-range needs LO-HI (hex)')
            skips.append((lo, hi))
        elif a == '--stack-delta':
            stack_delta = True
        elif a == '--no-rep-fix':
            rep_fix = False
        elif a.startswith('-'):
            sys.exit(f'datacmp: unknown option {a}\n' + __doc__.split('\n')[2])
        else:
            args.append(a)
    if len(args) != 2:
        sys.exit('datacmp: ' + __doc__.split('\n')[2])
    a, b = (load(p, rep_fix, start, skips) for p in args)
    print(f'A {args[0]}: {counts(a)}')
    print(f'B {args[1]}: {counts(b)}')
    delta = None
    moved = 0
    for i in range(min(len(a), len(b))):
        ra, rb = a[i], b[i]
        same = ra[1] == rb[1] and ra[3] == rb[3]
        if same and ra[2] != rb[2]:
            if stack_delta and ra[1] != 'I' and (
                    rb[2] - ra[2] == delta or
                    (delta is None and abs(rb[2] - ra[2]) >= MIN_DELTA)):
                delta = rb[2] - ra[2]
                moved += 1
            else:
                same = False
        if not same:
            print(f'first difference at record {i + 1}:')
            print(f'  A:{ra[0]}: {ra[4]}')
            print(f'  B:{rb[0]}: {rb[4]}')
            return 1
    if len(a) != len(b):
        longer, name = (a, 'A') if len(a) > len(b) else (b, 'B')
        r = longer[min(len(a), len(b))]
        print(f'first difference at record {min(len(a), len(b)) + 1}: '
              f'only {name} continues, {name}:{r[0]}: {r[4]}')
        return 1
    if stack_delta:
        print(f'equal; {moved} records matched with delta '
              f'{delta if delta is not None else 0:#x}')
    else:
        print('equal')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
