#!/usr/bin/env bash
# Build dash 0.5.12 (Debian's dash source, its patches applied) with
# $AECC: build/real/dash/dash (instrumented) and build/real/dash/dash.orig
# (twin), static, no line editing. Cached by hash.
# usage: tests/real/dash.sh [-fae-data [-fno-ae-vcache]] (common.sh)
set -euo pipefail
. "$(dirname "$0")/common.sh"

# src/Makefile.am's dash_CFILES (with Debian's priv.c) and dash_LDADD's
# generated sources
dash_files=(alias.c arith_yacc.c arith_yylex.c cd.c error.c eval.c exec.c
	expand.c histedit.c input.c jobs.c mail.c main.c memalloc.c miscbltin.c
	mystring.c options.c parser.c priv.c redir.c show.c trap.c output.c
	bltin/printf.c system.c bltin/test.c bltin/times.c var.c
	builtins.c init.c nodes.c signames.c syntax.c)

dash_recipe() {
	local work=$1 out=$2
	real_source dash 0.5.12 "$work"
	cd "$work"
	# Debian's privmode patches change Makefile.am: keep automake (not
	# installed) from running, and compile the list above directly.
	touch aclocal.m4 configure Makefile.in src/Makefile.in config.h.in
	./configure CC="$AECC" CC_FOR_BUILD=gcc CFLAGS=-O2
	# the generated sources, by helpers built with the host's compiler
	make -C src CC_FOR_BUILD=gcc builtins.h nodes.h syntax.h token.h \
		token_vars.h builtins.c init.c nodes.c signames.c syntax.c
	cd src
	"$AECC" "${real_flags[@]}" -O2 -include ../config.h -DBSD=1 -DSHELL -I. -I.. \
		-o "$out/dash" "${dash_files[@]}"
	test -x "$out/dash" && test -x "$out/dash.orig"
}

real_build dash dash_recipe "$0"
