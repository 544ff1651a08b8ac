#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""schema_patch.py PROG WHAT - rewrite one object's .ae_schema version (or
a pool value) in PROG in place, then its .ae_check program hash (include/aetrace/imgcheck.h),
so that aetrace reads the schema instead of refusing a changed file. A test
helper for tests/host/aetrace-errors.sh. WHAT:
  low-at-4    the first object with an AE_VAL_REG_VC_LOW record: version 4
  addr-at-5   the first object with an AE_VC_BY_ADDR record: version 5
  jt-at-6     the first object with a known table index (AE_VAL_JTIDX_KNOWN,
              AE_VAL_JTLOAD_KNOWN): version 6
  pred-at-7   the first object with a decided branch (AE_EV_PRED_KNOWN):
              version 7
  vcside-at-8 the first object with a record-first side (AE_EV_PRED with
              AE_PRED_VC_OTHER): version 8
  vcpool      that object: its version kept, the first pool value of such
              a predicate made 0 (a byte a value-cache record begins with)
  group-at-10 the first object with a value-cache group (AE_VC_GROUP):
              version 10
  groupbig    that object: its version kept, its first group counting 15
              records, more than follow it
  newer       the first object: the version after the newest aetrace reads
  same        the first object: its own version (the hash alone rewritten)
  nevbig      the first object: its version kept, 2^30 events, more than
              its record holds
Prints the object's old and new version; exits 1 if there is no such object."""
import struct
import sys

EV_PRED, EV_VAL, EV_VAL_AFTER, EV_PRED_KNOWN = 1, 5, 6, 11
PRED_VC_OTHER = 2
VAL_REG_VC, VAL_REG_VC_SEXT, VAL_REG_VC_LOW = 12, 13, 14
VAL_JTIDX_KNOWN, VAL_JTLOAD_KNOWN = 15, 16
VC_BY_ADDR = 0x80000000
VC_GROUP_SHIFT = 24
NEWER = 12


def sections(img):
    shoff, = struct.unpack_from("<Q", img, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", img, 0x3a)
    hdrs = [struct.unpack_from("<IIQQQQ", img, shoff + i * shentsize) for i in range(shnum)]
    stroff = hdrs[shstrndx][4]
    for name, typ, flags, _, off, size in hdrs:
        end = img.index(b"\0", stroff + name)
        yield img[stroff + name:end].decode(), typ, flags, off, size


def check_hash(img):
    """FNV-1a 64 over the loaded sections and the two aetrace tables."""
    h = 0xcbf29ce484222325
    for name, typ, flags, off, size in sections(img):
        if not ((flags & 2) and typ != 8) and name not in (".ae_schema", ".ae_imap"):
            continue
        for byte in name.encode() + b"\0" + struct.pack("<Q", size) + img[off:off + size]:
            h = ((h ^ byte) * 0x100000001b3) & 0xffffffffffffffff
    return h


def main():
    path, what = sys.argv[1], sys.argv[2]
    img = bytearray(open(path, "rb").read())
    sec = {name: (off, size) for name, _, _, off, size in sections(img)}
    so, slen = sec[".ae_schema"]
    pos = 0
    while pos + 32 <= slen:
        magic, version, size, _, _, nev = struct.unpack_from("<6I", img, so + pos)
        evs = [struct.unpack_from("<IHBBII", img, so + pos + 32 + 16 * i) for i in range(nev)]
        vcside = [a for _, kind, _, flag, a, b in evs
                  if kind == EV_PRED and flag & PRED_VC_OTHER and b]
        groups = [i for i, (_, kind, _, flag, _, b) in enumerate(evs)
                  if kind == EV_VAL and flag in (VAL_REG_VC, VAL_REG_VC_LOW) and
                  (b >> VC_GROUP_SHIFT) & 15]
        hit = what in ("newer", "same", "nevbig") or (what in ("group-at-10", "groupbig") and groups) or any(
            (what == "pred-at-7" and kind == EV_PRED_KNOWN) or
            (what in ("vcside-at-8", "vcpool") and vcside) or
            kind in (EV_VAL, EV_VAL_AFTER) and
            ((what == "low-at-4" and flag == VAL_REG_VC_LOW) or
             (what == "addr-at-5" and flag in (VAL_REG_VC, VAL_REG_VC_SEXT) and b & VC_BY_ADDR) or
             (what == "jt-at-6" and flag in (VAL_JTIDX_KNOWN, VAL_JTLOAD_KNOWN)))
            for _, kind, _, flag, _, b in evs)
        if hit:
            new = {"low-at-4": 4, "addr-at-5": 5, "jt-at-6": 6, "pred-at-7": 7,
                   "vcside-at-8": 8, "group-at-10": 10, "newer": NEWER}.get(what, version)
            struct.pack_into("<I", img, so + pos + 4, new)
            if what == "groupbig":
                at = so + pos + 32 + 16 * groups[0] + 12
                b, = struct.unpack_from("<I", img, at)
                struct.pack_into("<I", img, at, (b & ~(15 << VC_GROUP_SHIFT)) | 15 << VC_GROUP_SHIFT)
            if what == "nevbig":
                struct.pack_into("<I", img, so + pos + 20, 1 << 30)
            if what == "vcpool":
                struct.pack_into("<I", img, so + pos + 32 + 16 * nev + 4 * vcside[0], 0)
            co, _ = sec[".ae_check"]
            struct.pack_into("<Q", img, co + 8, check_hash(img))
            open(path, "wb").write(img)
            print(f"{path}: schema object at {pos}: version {version} -> {new}")
            return 0
        pos += (size + 3) & ~3
    print(f"{path}: no schema object for {what}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
