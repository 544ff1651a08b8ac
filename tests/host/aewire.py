# aewire.py - an independent Python implementation of the bdump network
# protocol v2 (docs/FORMAT.md "Network protocol") for tests/host/bdump-net.sh:
# a hostile or scripted sender, written from the document, not from wire.c.
import hashlib, hmac, os, socket, struct, time

MAGIC = 0x50574541
SRV_HELLO, CLI_HELLO, WELCOME, SEGMENT, ACK, FIN, ERROR = range(1, 8)
NO_SECRET = b"aetrace-bdump no shared secret"

def crc32c(data, crc=0):
    crc ^= 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82f63b78 & -(crc & 1))
    return crc ^ 0xffffffff

_tab = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ (0x82f63b78 & -(c & 1))
    _tab.append(c)

def crc32c_fast(data, crc=0):
    crc ^= 0xffffffff
    for b in data:
        crc = (crc >> 8) ^ _tab[(crc ^ b) & 0xff]
    return crc ^ 0xffffffff

def hkdf(ikm, salt, info, n=32):
    prk = hmac.new(salt, ikm, hashlib.sha256).digest()
    t, okm, i = b"", b"", 1
    while len(okm) < n:
        t = hmac.new(prk, t + info + bytes([i]), hashlib.sha256).digest()
        okm += t
        i += 1
    return okm[:n]

def frame(t, payload, key=None, seq=0, corrupt_crc=False):
    flags, ln = (1, len(payload) + 32) if key else (0, len(payload))
    h0 = struct.pack('<IHHII', MAGIC, t, flags, ln, 0)
    if key:
        payload = payload + hmac.new(key, struct.pack('<Q', seq) + h0 + payload, hashlib.sha256).digest()
    c = crc32c_fast(h0 + payload) ^ (1 if corrupt_crc else 0)
    return struct.pack('<IHHII', MAGIC, t, flags, ln, c) + payload

class Conn:
    def __init__(self, addr, secret=None, timeout=5):
        self.s = socket.create_connection(addr, timeout=timeout)
        self.k = secret or NO_SECRET
        self.tx = self.rx = None
        self.txseq = self.rxseq = 0

    def recv_exact(self, n):
        b = b""
        while len(b) < n:
            x = self.s.recv(n - len(b))
            if not x:
                raise EOFError("closed")
            b += x
        return b

    def recv(self):
        h = self.recv_exact(16)
        magic, t, flags, ln, crc = struct.unpack('<IHHII', h)
        p = self.recv_exact(ln)
        if flags & 1:
            mac = p[-32:]
            p = p[:-32]
            h0 = struct.pack('<IHHII', magic, t, flags, ln, 0)
            want = hmac.new(self.rx, struct.pack('<Q', self.rxseq) + h0 + p, hashlib.sha256).digest()
            assert hmac.compare_digest(mac, want), "bad MAC from receiver"
            self.rxseq += 1
        return t, p

    def send(self, t, payload, **kw):
        self.s.sendall(frame(t, payload, self.tx, self.txseq, **kw))
        if self.tx:
            self.txseq += 1

    def hello(self, host, start_ns, token, version=2):
        t, p = self.recv()
        assert t == SRV_HELLO, t
        ver, auth, ns = struct.unpack('<II32s', p)
        nc = os.urandom(32)
        pad = hkdf(self.k, ns + nc, b"aetrace-bdump-v2 token")
        wrapped = bytes(a ^ b for a, b in zip(token, pad))
        body = struct.pack('<IIQ64s32s32s', version, 0, start_ns, host, nc, wrapped)
        mac = hmac.new(self.k, b"aetrace-bdump-v2 client\0" + ns + body, hashlib.sha256).digest()
        self.send(CLI_HELLO, body + mac)
        ikm = self.k + token
        self.tx = hkdf(ikm, ns + nc, b"aetrace-bdump-v2 c2s")
        self.rx = hkdf(ikm, ns + nc, b"aetrace-bdump-v2 s2c")
        t, p = self.recv()
        if t == ERROR:
            return ('ERROR', p.rstrip(b'\0').decode())
        assert t == WELCOME, t
        nxt, complete, name = struct.unpack('<QQ128s', p)
        return (nxt, complete, name.rstrip(b'\0').decode())

    def segment(self, seq, stream, data):
        self.send(SEGMENT, struct.pack('<QII', seq, stream, 0) + data)
        t, p = self.recv()
        if t == ERROR:
            return ('ERROR', p.rstrip(b'\0').decode())
        return struct.unpack('<QQ', p)

    def fin(self, n):
        self.send(FIN, struct.pack('<Q', n))
        t, p = self.recv()
        if t == ERROR:
            return ('ERROR', p.rstrip(b'\0').decode())
        return struct.unpack('<QQ', p)

    def close(self):
        self.s.close()
