#!/usr/bin/env python3
"""elf_corrupt.py MODE IN OUT: write a copy of the ELF64 file IN to OUT with
one field broken, for the tests of programs that read ELF files (aerun).

MODE is one of
  shoff          e_shoff points past the end of the file
  shstrndx       e_shstrndx names a section that does not exist
  name           every section's sh_name points past the name table
  seqtab-offset  __ae_seqtab's data lies past the end of the file
  seqtab-order   __ae_seqtab's first two ranges swapped (unsorted)
"""
import struct
import sys

EH = '<16sHHIQQQIHHHHHH'
SH = '<IIQQQQIIQQ'


def main():
    if len(sys.argv) != 4:
        sys.exit('usage: elf_corrupt.py MODE IN OUT')
    mode, src, dst = sys.argv[1:]
    b = bytearray(open(src, 'rb').read())
    eh = list(struct.unpack_from(EH, b, 0))
    if eh[0][:4] != b'\x7fELF' or eh[0][4] != 2:
        sys.exit(f'elf_corrupt: {src}: not an ELF64 file')
    shoff, shnum, shstrndx = eh[6], eh[12], eh[13]
    shdrs = [list(struct.unpack_from(SH, b, shoff + i * 64)) for i in range(shnum)]
    strtab = shdrs[shstrndx]

    def name(sh):
        off = strtab[4] + sh[0]
        return bytes(b[off:b.index(0, off)]).decode()

    def put_sh(i):
        struct.pack_into(SH, b, shoff + i * 64, *shdrs[i])

    seq = [i for i, sh in enumerate(shdrs) if name(sh) == '__ae_seqtab']
    if mode.startswith('seqtab') and not seq:
        sys.exit(f'elf_corrupt: {src}: no __ae_seqtab')
    if mode == 'shoff':
        eh[6] = len(b) + 4096
        struct.pack_into(EH, b, 0, *eh)
    elif mode == 'shstrndx':
        eh[13] = shnum + 5
        struct.pack_into(EH, b, 0, *eh)
    elif mode == 'name':
        for i in range(1, shnum):
            shdrs[i][0] = strtab[5] + 1000
            put_sh(i)
    elif mode == 'seqtab-offset':
        shdrs[seq[0]][4] = len(b) + 4096
        put_sh(seq[0])
    elif mode == 'seqtab-order':
        off = shdrs[seq[0]][4]
        if shdrs[seq[0]][5] < 16:
            sys.exit(f'elf_corrupt: {src}: __ae_seqtab has fewer than two ranges')
        b[off:off + 8], b[off + 8:off + 16] = b[off + 8:off + 16], b[off:off + 8]
    else:
        sys.exit(f'elf_corrupt: unknown mode {mode}')
    open(dst, 'wb').write(b)


if __name__ == '__main__':
    main()
