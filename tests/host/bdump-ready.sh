# shellcheck shell=bash
# bdump_ready FILE PID: wait (up to 60 s) until the bdump started with
# `--ready FILE` (process PID) is the consumer, so that what runs next is
# traced; a slow guest (TCG on a loaded host) takes seconds. Returns 0, or
# 1 if bdump died or never got there.
bdump_ready() {
	local i
	for i in $(seq 600); do
		[ -e "$1" ] && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# trbuf_rings SUBBUF N: the driver's next buffer has N sub-buffers of
# SUBBUF bytes on each possible CPU (it gives every one a ring of total /
# CPUs).
trbuf_rings() {
	local p=/sys/module/trbuf/parameters ncpu
	ncpu=$(awk -F, '{ n = 0; for (i = 1; i <= NF; i++) { split($i, r, "-"); n += (r[2] == "" ? 1 : r[2] - r[1] + 1) } print n }' \
		/sys/devices/system/cpu/possible)
	echo "$1" >$p/subbuf_size && echo $(($1 * $2 * ncpu)) >$p/total_size
}
