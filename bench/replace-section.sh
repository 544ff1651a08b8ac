#!/usr/bin/env bash
# replace-section.sh RESULTS SECTION-FILE: put SECTION-FILE (which starts
# with a "## Title" line) into RESULTS in place of the section of the same
# title (up to the next "## " heading), or append it. Benchmarks call this
# so bench/RESULTS.md holds the latest run of each, with its command.
set -eu
touch "$1"
python3 - "$1" "$2" <<'PY'
import re, sys
path, sec = sys.argv[1], open(sys.argv[2]).read().lstrip("\n")
title = sec.splitlines()[0]
text = open(path).read()
m = re.search("^" + re.escape(title) + r"\n.*?(?=^## |\Z)", text, re.S | re.M)
if m:
    text = text[:m.start()] + sec.rstrip("\n") + "\n\n" + text[m.end():]
else:
    if not text.strip():
        text = "# aetrace benchmark results\n\n"
    text = text.rstrip("\n") + "\n\n" + sec
open(path, "w").write(text.rstrip("\n") + "\n")
PY
