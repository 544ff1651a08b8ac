# Shared by trace-exact.sh and lackey-same-run.sh (sourced, not a suite):
# the corpus built once with aecc by `make tests-corpus-aecc` (part of
# `make check`) into build/tests/corpus/aecc/NAME and NAME.orig. Needs $top.

# ae_corpus_aecc NAME OUT AECC: OUT and OUT.orig are NAME built by AECC
# (aecc -O2 ... -lm): copied from the shared build when AECC is bin/aecc and
# that build is newer than it and the source, else compiled here; the
# compiler's messages go to OUT.log. Returns aecc's status.
ae_corpus_aecc() {
	local name=$1 out=$2 aecc=$3 src=$top/tests/corpus/$1.c
	local pre=$top/build/tests/corpus/aecc/$1
	if [ "$aecc" = "$top/bin/aecc" ] && [ -x "$pre" ] && [ -x "$pre.orig" ] &&
	   [ "$pre" -nt "$aecc" ] && [ "$pre" -nt "$src" ]; then
		cp "$pre" "$out" && cp "$pre.orig" "$out.orig" && : >"$out.log" && return 0
	fi
	"$aecc" -O2 -o "$out" "$src" -lm >"$out.log" 2>&1
}
