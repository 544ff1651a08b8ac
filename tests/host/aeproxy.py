# aeproxy.py LISTEN_PORT UPSTREAM_HOST UPSTREAM_PORT SECONDS [sched|ack|refuse|crc]:
# a man in the middle for tests/host/bdump-net.sh. Forwards bdump <->
# bdump-recv; in the first SEGMENT of stream 1 (sched.bin), or with `ack`
# in the first ACK to the sender (its next_seq), it changes one byte and
# recomputes the CRC-32C, as an attacker on the path would. With `refuse`
# it cuts the first connection after its first ACK and answers the
# second one's hello with a forged ERROR "authentication failed" in place
# of the receiver's WELCOME. With `crc` it flips a byte of the first SEGMENT
# and leaves the CRC-32C as it was (line noise, or a careless attacker).
import socket, struct, sys, threading, time
sys.path.insert(0, __import__('os').path.dirname(__file__))
from aewire import crc32c_fast

port, uhost, uport, secs = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
mode = sys.argv[5] if len(sys.argv) > 5 else 'sched'
flipped = [0]
lock = threading.Lock()

def pump_raw(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

def recv_exact(s, n):
    b = b""
    while len(b) < n:
        x = s.recv(n - len(b))
        if not x:
            raise EOFError
        b += x
    return b

def pump_msgs(a, b, k=0):
    try:
        while True:
            h = recv_exact(a, 16)
            magic, t, flags, ln, crc = struct.unpack('<IHHII', h)
            p = bytearray(recv_exact(a, ln))
            if mode == 'refuse' and k == 2 and t == 3:
                e = b"authentication failed\0"
                h0 = struct.pack('<IHHII', magic, 7, 0, len(e), 0)
                b.sendall(struct.pack('<IHHII', magic, 7, 0, len(e), crc32c_fast(h0 + e)) + e)
                print("forged a refusal", flush=True)
                break
            hit = (mode == 'sched' and t == 4 and ln > 16 + 32 + 8 and
                   struct.unpack_from('<I', p, 8)[0] == 1) or (mode == 'ack' and t == 5)
            if mode == 'crc' and t == 4 and ln > 16 + 32 + 8:
                with lock:
                    if not flipped[0]:
                        flipped[0] = 1
                        p[16 + 5] ^= 0x40
                        print("flipped a byte of a segment, CRC left stale", flush=True)
            if hit:
                with lock:
                    if not flipped[0]:
                        flipped[0] = 1
                        p[16 + 5 if mode == 'sched' else 0] ^= 0x40
                        crc = crc32c_fast(struct.pack('<IHHII', magic, t, flags, ln, 0) + bytes(p))
                        print("flipped a byte of a sched.bin segment" if mode == 'sched' else
                              "flipped a byte of an ACK", flush=True)
            b.sendall(struct.pack('<IHHII', magic, t, flags, ln, crc) + bytes(p))
            if mode == 'refuse' and k == 1 and t == 5:
                print("cut the connection", flush=True)
                break
    except (OSError, EOFError):
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(('127.0.0.1', port))
ls.listen(8)
ls.settimeout(0.5)
end = time.time() + secs
nconn = 0
while time.time() < end:
    try:
        c, _ = ls.accept()
    except socket.timeout:
        continue
    nconn += 1
    u = socket.create_connection((uhost, uport))
    up, down = (pump_msgs, pump_raw) if mode in ('sched', 'crc') else (pump_raw, pump_msgs)
    threading.Thread(target=up, args=(c, u), daemon=True).start()
    threading.Thread(target=down, args=(u, c) + ((nconn,) if down == pump_msgs else ()),
                     daemon=True).start()
