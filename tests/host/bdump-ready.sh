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
