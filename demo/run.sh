#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# `make demo`, and tests/test_demo.c: record the bundled workload
# (tests/workloads/demo.c, which starts tests/workloads/py/demo.py) with the
# default event kinds and wakeups, then answer four questions from the
# capture, each under a one-line heading.
# usage: demo/run.sh STKREC WORKLOADS OUTDIR [SECONDS]
#   STKREC     the stkrec binary; WORKLOADS: where `make workloads` put demo
#   OUTDIR     gets demo.cap and demo.svg, and a temporary directory for the
#              O_DIRECT file (not /tmp: tmpfs may refuse O_DIRECT)
set -e
stkrec=$1
wl=$2
out=$3
secs=${4:-3}
if [ $# -lt 3 ]; then
	echo "usage: demo/run.sh STKREC WORKLOADS OUTDIR [SECONDS]" >&2
	exit 2
fi
cap=$out/demo.cap
svg=$out/demo.svg
# Debian's own interpreter, not a shim before it in PATH (pyenv's is a
# shell script: its processes would crowd the tables)
py=/usr/bin/python3
[ -x "$py" ] || py=python3
tmp=$(mktemp -d "$out/demo.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

heading() {
	printf '\n=== %s\n\n' "$1"
}

heading "Recording the demo workload for $secs s: a lock, a pipe, a sleeper, a CPU burner, O_DIRECT I/O, Python"
"$stkrec" record -e offcpu,cpu,bio,wakeup -o "$cap" -- \
	"$wl/demo" "$secs" "$tmp" "$py" "$wl/py/demo.py"
heading "Where did the threads wait, and where did they burn CPU? (stkrec report -i $cap)"
"$stkrec" report -i "$cap"
heading "Which wait was the longest, and who ended it? (stkrec report --top-waits -r 1)"
"$stkrec" report -i "$cap" --top-waits -r 1
heading "Who did the disk I/O? (stkrec report --biotop 60)"
"$stkrec" report -i "$cap" --biotop 60
heading "Where did the waits go, as a picture? (stkrec report --svg $svg)"
"$stkrec" report -i "$cap" --svg "$svg"
echo "wrote $svg: open it in a browser (click zooms, Ctrl-F searches)"
