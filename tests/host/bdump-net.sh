#!/usr/bin/env bash
# bdump-net.sh - bdump -> bdump-recv between two network namespaces joined
# by a veth pair: the link is cut and restored and the receiver killed and
# restarted mid-stream, and the stored trace must still decode chunk by
# chunk to exactly the bytes of a local capture of the same synthetic run.
# Also: wrong secret rejected, malformed protocol input rejected with a
# clear error and nothing stored as valid. TAP output. Needs root.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
bd=${BDUMP:-$top/bin/bdump}
br=${BDUMP_RECV:-$top/bin/bdump-recv}
ct=${CONTAINER_TEST:-$top/build/bdump/container_test}
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; }
check() { if eval "$2"; then ok "$1"; else nok "$1"; fi; }

if [ ! -x "$bd" ] || [ ! -x "$br" ] || [ ! -x "$ct" ]; then
	echo "not ok 1 - bdump not built (run make)"
	exit 1
fi
if [ "$(id -u)" != 0 ] || ! ip netns add "bdchk$$" 2>/dev/null; then
	echo "ok 1 - network namespaces # SKIP needs root and ip netns"
	exit 0
fi
ip netns del "bdchk$$"

A=bdA$$ B=bdB$$
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	ip netns del $A 2>/dev/null
	ip netns del $B 2>/dev/null
	if [ -n "${BDUMP_TEST_KEEP:-}" ]; then echo "# kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
ip netns add $A && ip netns add $B &&
ip link add vA$$ netns $A type veth peer name vB$$ netns $B &&
ip -n $A addr add 10.77.0.1/24 dev vA$$ && ip -n $B addr add 10.77.0.2/24 dev vB$$ &&
ip -n $A link set vA$$ up && ip -n $B link set vB$$ up &&
ip -n $A link set lo up && ip -n $B link set lo up
check "two hosts: namespaces $A and $B joined by veth" '[ $? -eq 0 ] && ip -n $A route get 10.77.0.2 | grep -q vA$$'

cd "$tmp"
mkdir store
printf 'correct horse battery staple\n' > secret
printf 'wrong\n' > badsecret
start_recv() {
	ip netns exec $B "$br" --listen 10.77.0.2:7077 --dir store --secret secret 2>>recv.log &
	recv_pid=$!; pids+=($recv_pid)
	sleep 0.3
}
start_recv

spec=bytes=144M,cpus=2,subbuf=256K,rate=12M,seed=5
ip netns exec $A "$bd" -f 200 --net-buffer 2 --secret secret --synthetic-source $spec \
	tcp://10.77.0.2:7077 net.sched 2>send.log &
send_pid=$!; pids+=($send_pid)
sleep 2
ip -n $A link set vA$$ down		# cut the link for 6 s
sleep 6
ip -n $A link set vA$$ up
sleep 1
{ kill -9 $recv_pid; wait $recv_pid; } 2>/dev/null	# receiver crashes ...
sleep 1
start_recv				# ... and comes back
wait $send_pid
rc=$?
check "bdump over a cut link and a receiver restart: exit 0" '[ $rc -eq 0 ]'
check "bdump noticed the outage and reconnected" 'grep -Eq "reconnecting|retrying" send.log'
check "receiver resumed the session at a segment > 0 after its restart" \
	'grep -q "resuming at segment [1-9]" recv.log'
sess=$(ls store)
check "one session stored, named after host and start time ($sess)" \
	'[ $(ls store | wc -l) -eq 1 ] && [[ $sess == *-20[0-9][0-9][01][0-9]*T*Z ]]'
check "session marked complete" 'grep -q "complete 1" store/$sess/state'

# The same synthetic run captured locally (no rate limit: same bytes).
"$bd" -q --synthetic-source ${spec/rate=12M/rate=0} local.zst local.sched
"$ct" payloads local.zst > local.chunks
"$ct" payloads store/$sess/trace.zst > net.chunks
check "stored trace decodes chunk by chunk to exactly the local capture's bytes" \
	'[ -s local.chunks ] && cmp local.chunks net.chunks'
check "stored sched.bin equals the local one and the sender's SCHED" \
	'cmp local.sched store/$sess/sched.bin && cmp net.sched local.sched'
check "stored capture verifies (payloads, seqs, END, SCHED)" \
	'"$bd" --check store/$sess/trace.zst store/$sess/sched.bin >/dev/null'

# Many concurrent streams: three senders at once, three sessions.
cpids=()
for seed in 11 12 13; do
	ip netns exec $A "$bd" -q --secret secret --synthetic-source bytes=16M,rate=16M,seed=$seed \
		tcp://10.77.0.2:7077 c$seed.sched &
	cpids+=($!)
done
crc=0
for p in "${cpids[@]}"; do wait $p || crc=1; done
cok=0
for d in store/*/; do
	"$bd" --check "$d/trace.zst" "$d/sched.bin" | grep -q "synthetic payloads verified" && cok=$((cok + 1))
done
check "three concurrent streams: all exit 0, three more sessions, all four verify" \
	'[ $crc -eq 0 ] && [ $(ls store | wc -l) -eq 4 ] && [ $cok -eq 4 ]'

sleep 0.3
nfd=$(ls -l /proc/$recv_pid/fd | grep -c "/store/")
check "receiver closed the files of the 4 finished sessions ($nfd still open)" '[ $nfd -eq 0 ]'

# Wrong secret: refused, nothing stored.
ip netns exec $A "$bd" -q -d 2 --secret badsecret --synthetic-source bytes=8M,rate=4M \
	tcp://10.77.0.2:7077 bad.sched 2>bad.log
rc=$?
check "wrong secret: bdump fails with 'authentication failed'" \
	'[ $rc -ne 0 ] && grep -q "authentication failed" bad.log'
check "wrong secret: receiver logs it and stores no session" \
	'grep -q "authentication failed" recv.log && [ $(ls store | wc -l) -eq 4 ]'
ip netns exec $A "$bd" -q -d 2 --synthetic-source bytes=8M,rate=4M \
	tcp://10.77.0.2:7077 bad.sched 2>bad2.log
check "no secret against a receiver that requires one: refused" \
	'[ $? -ne 0 ] && grep -q "requires a shared secret" bad2.log'

# No receiver at all: bdump keeps everything and waits; the first SIGINT
# ends the capture, a second one gives up waiting (exit != 0, says so).
ip netns exec $A "$bd" -q --synthetic-source bytes=1G,subbuf=64K,rate=2M tcp://10.77.0.2:7099 none.sched 2>none.log &
npid=$!; pids+=($npid)
sleep 1.5; kill -INT $npid; sleep 1
check "unreachable receiver: first SIGINT keeps waiting for the acknowledgements" 'kill -0 $npid'
kill -INT $npid; wait $npid
rc=$?
check "second SIGINT: gives up, exit != 0, reports unacknowledged segments" \
	'[ $rc -ne 0 ] && grep -q "not acknowledged" none.log'

# Malformed protocol input, against a receiver without a secret.
mkdir store2
ip netns exec $B "$br" --listen 10.77.0.2:7078 --dir store2 2>recv2.log &
pids+=($!)
sleep 0.3
ip netns exec $A python3 - <<'PY' > mal.out 2>&1
import socket, struct, time
def crc32c(data, crc=0):
    crc ^= 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82f63b78 & -(crc & 1))
    return crc ^ 0xffffffff
def msg(t, payload, corrupt=False):
    h = struct.pack('<IHHII', 0x50574541, t, 0, len(payload), 0)
    c = crc32c(h + payload)
    if corrupt: c ^= 1
    return struct.pack('<IHHII', 0x50574541, t, 0, len(payload), c) + payload
def conn():
    s = socket.create_connection(('10.77.0.2', 7078), timeout=5)
    s.recv(16 + 40)
    return s
def hello(s, host):
    s.sendall(msg(2, struct.pack('<IIQ', 1, 0, 1700000000123456789) + host.ljust(64, b'\0') + b'\0' * 64))
    time.sleep(0.3); s.recv(4096)
# 1: garbage instead of a hello
s = conn(); s.sendall(b'GET / HTTP/1.0\r\n\r\n' * 3); time.sleep(0.3); s.close()
# 2: valid hello, then a segment with a bad CRC
s = conn(); hello(s, b'malformed-crc')
s.sendall(msg(4, struct.pack('<QII', 0, 0, 0) + b'x' * 1000, corrupt=True)); time.sleep(0.3); s.close()
# 3: valid hello, then a segment out of order
s = conn(); hello(s, b'malformed-gap')
s.sendall(msg(4, struct.pack('<QII', 5, 0, 0) + b'y' * 100)); time.sleep(0.3); s.close()
# 4: valid hello, then a huge length
s = conn(); hello(s, b'malformed-len')
s.sendall(struct.pack('<IHHII', 0x50574541, 4, 0, 0x7fffffff, 0)); time.sleep(0.3); s.close()
# 5: a well-formed session whose stored bytes are not a valid trace, then FIN
s = conn(); hello(s, b'malformed-fin')
s.sendall(msg(4, struct.pack('<QII', 0, 0, 0) + b'z' * 100)); time.sleep(0.3); s.recv(4096)
s.sendall(msg(6, struct.pack('<Q', 1))); time.sleep(0.5); s.close()
print("sent")
PY
sleep 0.5
check "garbage instead of a hello: error names peer and stream offset" \
	'grep -q "stream offset 0: bad message magic" recv2.log'
check "segment with a bad CRC: CRC error reported" 'grep -q "malformed-crc.*CRC-32C mismatch" recv2.log'
check "segment out of order: reported" 'grep -q "malformed-gap.*bad SEGMENT seq 5" recv2.log'
check "huge message length: reported" 'grep -q "malformed-len.*exceeds" recv2.log'
check "FIN over bytes that are not a valid trace: receiver refuses to mark it complete" \
	'grep -q "malformed-fin.*fails verification" recv2.log && grep -q "complete 0" store2/malformed-fin-*/state'
check "malformed sessions: nothing stored, none complete" \
	'[ -z "$(cat store2/malformed-[cgl]*/trace.zst store2/malformed-*/sched.bin)" ] && ! grep -q "complete 1" store2/malformed-*/state && ! grep -q "next_seq [1-9]" store2/malformed-[cgl]*/state'
check "receiver survived all of it (still accepts a real stream)" \
	'ip netns exec $A "$bd" -q --synthetic-source bytes=4M tcp://10.77.0.2:7078 ok.sched && grep -l "complete 1" store2/*/state | grep -q .'
echo "1..$n"
