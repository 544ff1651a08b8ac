#!/usr/bin/env python3
"""schedlog_check.py - an independent reader of the BPF schedule log
(schedlog-record, docs/FORMAT.md "BPF schedule log") for the tests.

  schedlog_check.py dump FILE                 print every record
  schedlog_check.py valid FILE                format, END, per-CPU order, switch chains
  schedlog_check.py strict FILE               same, no switch may be missing, idle seen
  schedlog_check.py workload FILE PARENT CHILD N   the events of sched_workload sleep N
  schedlog_check.py lost FILE                 losses are recorded (header, LOST, END)
  schedlog_check.py markers FILE SCHED        every SWITCH_IN marker of sched.bin
                                              matches a sched_switch of FILE

Prints one line per check ("ok: ..." / "FAIL: ..."), exits 1 on a failure.
"""
import struct
import sys

HDR = struct.Struct('<QIIIIQQQQQ')
EV = struct.Struct('<QHHIiiiiQQ16s16s')
MAGIC = 0x4650424843534541
SWITCH, MIGRATE, FORK, EXEC, EXIT, WAKEUP, WAKEUP_NEW, LOST, END = range(1, 10)
NAMES = {1: 'SWITCH', 2: 'MIGRATE', 3: 'FORK', 4: 'EXEC', 5: 'EXIT', 6: 'WAKEUP',
         7: 'WAKEUP_NEW', 8: 'LOST', 9: 'END'}
failed = False


def check(cond, what):
    global failed
    print(('ok: ' if cond else 'FAIL: ') + what)
    if not cond:
        failed = True
    return cond


class Ev:
    __slots__ = ('i', 't', 'type', 'cpu', 'flags', 'pid', 'tid', 'pid2', 'tid2',
                 'arg', 'arg2', 'comm', 'comm2')

    def __init__(self, i, raw):
        (self.t, self.type, self.cpu, self.flags, self.pid, self.tid, self.pid2,
         self.tid2, self.arg, self.arg2, c1, c2) = EV.unpack(raw)
        self.i = i
        self.comm = c1.split(b'\0')[0].decode(errors='replace')
        self.comm2 = c2.split(b'\0')[0].decode(errors='replace')

    def __str__(self):
        return '%6d %d.%09d cpu%-2d %-10s %d/%d %s -> %d/%d %s arg %d arg2 %d' % (
            self.i, self.t // 10**9, self.t % 10**9, self.cpu, NAMES.get(self.type, '?'),
            self.pid, self.tid, self.comm, self.pid2, self.tid2, self.comm2, self.arg, self.arg2)


def load(path):
    data = open(path, 'rb').read()
    if len(data) < HDR.size:
        sys.exit('%s: %d bytes, shorter than the %d-byte header' % (path, len(data), HDR.size))
    h = dict(zip(('magic', 'version', 'record_size', 'nr_cpus', 'flags', 'start_ns',
                  'end_ns', 'events', 'lost', 'reserved'), HDR.unpack_from(data)))
    if h['magic'] != MAGIC or h['version'] != 1 or h['record_size'] != EV.size:
        sys.exit('%s: bad header %r' % (path, h))
    body = data[HDR.size:]
    if len(body) % EV.size:
        sys.exit('%s: %d bytes after the header, not a multiple of %d' % (path, len(body), EV.size))
    evs = [Ev(i, body[o:o + EV.size]) for i, o in enumerate(range(0, len(body), EV.size))]
    return h, evs


def valid(path, strict=False):
    h, evs = load(path)
    check(h['flags'] & 1, 'header says complete (clean stop)')
    check(evs and evs[-1].type == END, 'last record is END')
    if not evs:
        return h, evs, []
    end = evs[-1]
    check(end.arg == len(evs) - 1 == h['events'],
          'END and header count the %d records before END' % (len(evs) - 1))
    check(end.arg2 == h['lost'], 'END and header agree on lost events (%d)' % h['lost'])
    check(all(e.type in NAMES for e in evs), 'every record type is known')
    check(all(h['start_ns'] <= e.t <= h['end_ns'] for e in evs),
          'every time lies between the header start and end')
    check(all(e.cpu < h['nr_cpus'] for e in evs if e.type != LOST and e.type != END),
          'every cpu < nr_cpus (%d)' % h['nr_cpus'])
    last, prev_next, bad_t, bad_chain, nsw = {}, {}, [], [], 0
    # Some kernels never trace switches out of some tasks (this sandbox's
    # agent threads: ftrace shows the same); a chain gap after a switch to
    # such a task is the kernel's, noted; any other gap fails (strict: all).
    prevs = {e.tid for e in evs if e.type == SWITCH}
    silent, gaps = set(), []
    for e in evs:
        if e.type != SWITCH:
            continue
        nsw += 1
        if e.cpu in last and e.t < last[e.cpu]:
            bad_t.append(e)
        last[e.cpu] = e.t
        if e.cpu in prev_next and prev_next[e.cpu][0] != e.tid:
            p = prev_next[e.cpu]
            if p[0] not in prevs and not strict:
                silent.add('%d %s' % (p[0], p[1]))
                gaps.append(e)
            else:
                bad_chain.append(e)
        prev_next[e.cpu] = (e.tid2, e.comm2)
    if silent:
        print('# note: the kernel never traced a switch out of: ' + ', '.join(sorted(silent)))
    check(nsw > 0, '%d switches on %d CPUs' % (nsw, len(last)))
    check(not bad_t, 'switch times non-decreasing per CPU' +
          (': first violation %s' % bad_t[0] if bad_t else ''))
    if h['lost'] == 0:
        check(not bad_chain, 'per CPU, every switch starts from the task the previous one ran' +
              (': first violation %s' % bad_chain[0] if bad_chain else ''))
    idle = any(e.type == SWITCH and (e.tid == 0 or e.tid2 == 0) for e in evs)
    if strict:
        check(idle, 'the idle task appears')
    elif not idle:
        print('# note: no switch to or from the idle task (busy machine)')
    return h, evs, gaps


def workload(path, parent, child, n):
    h, evs, gaps = valid(path)
    parent, child, n = int(parent), int(child), int(n)
    # switches to the child from a task the kernel never traces out of are
    # invisible (the gap's next switch starts from the child); so may be
    # wakeups done in such a task's context: both only where gaps exist
    hidden_in = sum(1 for e in gaps if e.tid == child)
    slack = len(gaps)
    if gaps:
        print('# note: %d chain gaps (%d before the child runs): tolerated as missing'
              ' switches in and wakeups' % (len(gaps), hidden_in))
    forks = [e for e in evs if e.type == FORK and e.tid2 == child]
    check(len(forks) == 1 and forks[0].pid == parent and forks[0].tid == parent
          and forks[0].pid2 == child, 'one FORK %d -> %d' % (parent, child))
    new = [e for e in evs if e.type == WAKEUP_NEW and e.tid == child]
    check(len(new) == 1, 'one WAKEUP_NEW of the child')
    execs = [e for e in evs if e.type == EXEC and e.tid == child]
    check(len(execs) == 1 and execs[0].arg == child and execs[0].comm == 'sched_workload',
          'one EXEC of the child, comm sched_workload')
    exits = [e for e in evs if e.type == EXIT and e.tid == child]
    check(len(exits) == 1 and exits[0].arg == 7 << 8, 'one EXIT of the child, code 7 << 8')
    outs = [e for e in evs if e.type == SWITCH and e.tid == child]
    ins = [e for e in evs if e.type == SWITCH and e.tid2 == child]
    sleeps = [e for e in outs if e.arg != 0]
    check(len(sleeps) >= n, '%d switches out of the child sleeping (>= %d)' % (len(sleeps), n))
    check(len(ins) + hidden_in == len(outs) and len(outs) >= n + 1,
          '%d switches in (+%d hidden), %d out of the child' % (len(ins), hidden_in, len(outs)))
    wakes = [e for e in evs if e.type == WAKEUP and e.tid == child]
    check(len(wakes) >= n - slack, '%d wakeups of the child (>= %d - %d)' % (len(wakes), n, slack))
    if forks and execs and exits and ins and outs:
        check(forks[0].t <= new[0].t <= ins[0].t <= execs[0].t <= exits[0].t <= outs[-1].t,
              'fork, first run, exec, exit, last switch out in time order')
        check(outs[-1].arg != 0 and outs[-1].i > exits[0].i,
              'the last switch out of the child follows its exit, not runnable')
        check(all(e.comm == 'sched_workload' for e in outs if e.t > execs[0].t) and
              all(e.comm2 == 'sched_workload' for e in ins if e.t > execs[0].t),
              'switches after the exec carry the new comm')


def lost(path):
    h, evs = load(path)
    check(h['flags'] & 1, 'header says complete')
    check(h['lost'] > 0, 'header counts %d lost events' % h['lost'])
    lr = [e for e in evs if e.type == LOST]
    check(lr and sum(e.arg for e in lr) == h['lost'],
          '%d LOST records add up to the header count' % len(lr))
    check(evs and evs[-1].type == END and evs[-1].arg2 == h['lost'], 'END repeats the count')


MK = struct.Struct('<QIHHiiQIIQQQQ')    # struct trbuf_marker, 72 bytes


def markers(path, sched):
    h, evs, _ = valid(path, strict=True)
    data = open(sched, 'rb').read()
    check(len(data) % MK.size == 0, '%s: %d bytes, a multiple of %d' % (sched, len(data), MK.size))
    import bisect
    sw = {}                 # per CPU: switch times and the task each one ran
    for e in evs:
        if e.type == SWITCH:
            sw.setdefault(e.cpu, ([], []))
            sw[e.cpu][0].append(e.t)
            sw[e.cpu][1].append(e.tid2)
    n = bad = 0
    first_bad = None
    delays = []
    for i in range(len(data) // MK.size):
        t, typ, cpu, flags, pid, tid, seq, off, arg2, ip, sp, arg, cx = MK.unpack_from(data, i * MK.size)
        if typ != 2:        # TRBUF_MK_SWITCH_IN
            continue
        if not (h['start_ns'] <= t <= h['end_ns']):
            continue
        n += 1
        # the marker is written just after the switch: the last sched_switch
        # on this cpu at or before it ran this task, at most 100 ms earlier
        # (the guest is emulated: CI saw 16 ms on a loaded host)
        times, tids = sw.get(cpu, ([], []))
        k = bisect.bisect_right(times, t) - 1
        good = k >= 0 and tids[k] == tid and t - times[k] <= 10**8
        if good:
            delays.append(t - times[k])
        if not good:
            bad += 1
            if first_bad is None:
                first_bad = 'marker %d cpu %d tid %d time %d (%s)' % (
                    i, cpu, tid, t, 'no switch before it' if k < 0 else
                    'last switch ran tid %d, %d ns earlier' % (tids[k], t - times[k]))
    check(n > 0, '%d SWITCH_IN markers inside the recording' % n)
    if delays:
        delays.sort()
        print('# marker after its sched_switch by: median %d ns, max %d ns' %
              (delays[len(delays) // 2], delays[-1]))
    check(bad == 0, 'every SWITCH_IN marker: the last sched_switch on its cpu before it ran its tid,'
          ' at most 100 ms earlier' + ('' if not bad else ': %d do not, first %s' % (bad, first_bad)))


def main():
    a = sys.argv[1:]
    if not a:
        sys.exit(__doc__)
    if a[0] == 'dump':
        h, evs = load(a[1])
        print(h)
        for e in evs:
            print(e)
        return
    {'valid': valid, 'strict': lambda p: valid(p, True), 'workload': workload, 'lost': lost, 'markers': markers}[a[0]](*a[1:])
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()
