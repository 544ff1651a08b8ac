#!/usr/bin/env python3
"""timeline_gen.py - a hand-built capture schedule for tests/host/timeline.sh.

  timeline_gen.py DIR [SEED]

Draws the truth first: per CPU a sequence of slices (task, start, end) among
traced tasks, an untraced task and idle. Then writes what the kernel and the
BPF recorder would have logged for it: DIR/sched.bin (struct trbuf_marker:
a SWITCH_IN just after each switch to a traced task, other markers inside
its slices, START/EXIT), DIR/all.bin (the BPF schedule log), and the truth
in DIR/truth.json: every non-idle slice [cpu, tid, start_ns, end_ns,
traced], and per CPU the switch-in times of traced tasks.
"""
import json
import random
import struct
import sys

d = sys.argv[1]
rnd = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
NCPU = 2
T0 = 5_000_000_000
# (pid, tid, comm, traced); comms exercise JSON and XML escaping
TASKS = [(100, 100, 'lua', 1), (100, 101, 'lua', 1), (200, 200, 'srv"<&>\\x', 1),
         (300, 300, 'bash', 0), (301, 301, 'kworker/0:1\x01\xff', 0), (0, 0, 'swapper', 0)]
MK = struct.Struct('<QIHHiiQIIQQQQ')
EV = struct.Struct('<QHHIiiiiQQ16s16s')
HDR = struct.Struct('<QIIIIQQQQQ')

markers, events, truth = [], [], []
switch_ins = {c: [] for c in range(NCPU)}
end_ns = T0
per_cpu = []
for cpu in range(NCPU):
    t = T0 + rnd.randint(100_000, 500_000)
    cur = TASKS[3]                      # running since before the recording
    n = rnd.randint(20, 40)
    slices = [(cur, T0, None)]
    for k in range(n):
        nxt = rnd.choice([x for x in TASKS if x is not cur])
        slices[-1] = (slices[-1][0], slices[-1][1], t)
        events.append((t, 1, cpu, cur, nxt, 1 if cur[0] else 0))
        slices.append((nxt, t, None))
        cur = nxt
        t += rnd.randint(20_000, 2_000_000)
    slices[-1] = (slices[-1][0], slices[-1][1], None)   # runs until the stop
    end_ns = max(end_ns, t + 1000)
    per_cpu.append(slices)
end_ns += 10
for cpu, slices in enumerate(per_cpu):
    for task, s, e in slices:
        e = e or end_ns
        if task[3]:
            if s > T0:
                m = s + rnd.randint(1_000, 9_000)
                markers.append((m, 2, cpu, task))
                switch_ins[cpu].append(m)
            for _ in range(rnd.randint(0, 2)):
                markers.append((rnd.randint(s + 10_000, e - 1), rnd.choice([4, 5, 9]), cpu, task))
        if task[1]:
            truth.append([cpu, task[1], s, e, task[3]])
    # other events that are no switches
    events.append((T0 + 50_000, 6, cpu, TASKS[0], TASKS[3], 0))
    events.append((T0 + 60_000, 2, cpu, TASKS[1], TASKS[5], 0))
events.sort(key=lambda x: x[0])
with open(d + '/all.bin', 'wb') as f:
    f.write(HDR.pack(0x4650424843534541, 1, EV.size, NCPU, 1, T0, end_ns, len(events), 0, 0))
    for t, typ, cpu, a, b, state in events:
        f.write(EV.pack(t, typ, cpu, 0, a[0], a[1], b[0], b[1], state, 0,
                        a[2].encode('latin-1'), b[2].encode('latin-1')))
    f.write(EV.pack(end_ns, 9, 0, 0, 0, 0, 0, 0, len(events), 0, b'', b''))
markers.sort(key=lambda x: x[0])
with open(d + '/sched.bin', 'wb') as f:
    for i, (t, typ, cpu, task) in enumerate(markers):
        f.write(MK.pack(t, typ, cpu, 0, task[0], task[1], 0, i * 8, 0, 0x401000, 0, 0, 0))
json.dump({'slices': truth, 'switch_ins': switch_ins, 'ncpu': NCPU}, open(d + '/truth.json', 'w'))
