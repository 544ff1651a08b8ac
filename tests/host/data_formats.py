#!/usr/bin/env python3
# data_formats.py LACKEY DIN BIN: the din and bin outputs of aetrace regen
# carry exactly the records of its lackey output (docs/FORMAT.md), each
# converted here independently. Exit 0 when they do, 1 otherwise.
import struct, sys
want_din, want_bin = [], []
for line in open(sys.argv[1]):
    if line.startswith("I  "):
        a, s = line[3:].split(",")
        want_din.append("2 %x %d" % (int(a, 16), int(s)))
        want_bin.append((int(a, 16), int(s), None))
    elif line[:1] == " " and line[1:2] in "LSM":
        k = line[1]
        a, s = line[3:].split(",")
        a, s = int(a, 16), int(s)
        if k in "LM":
            want_din.append("0 %x %d" % (a, s))
        if k in "SM":
            want_din.append("1 %x %d" % (a, s))
        want_bin.append((a, s, "LSM".index(k) + 1))
din = open(sys.argv[2]).read().split("\n")[:-1]
b = open(sys.argv[3], "rb").read()
got_bin, p = [], 0
while p < len(b):
    a, t = struct.unpack_from("<QB", b, p)
    if t >= 0xf0:
        got_bin.append((a, struct.unpack_from("<H", b, p + 9)[0], t & 0xf))
        p += 11
    else:
        got_bin.append((a, t, None))
        p += 9
sys.exit(0 if din == want_din and got_bin == want_bin else 1)
