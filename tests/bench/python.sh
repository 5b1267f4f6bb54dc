#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make bench, section 11: Python frames, on Debian's python3.11 running the
# workloads of tests/workloads/py, side by side with perf record
# --call-graph dwarf on the same runs (which shows no Python frames):
#   - the share of CPU samples in Python code (an eval frame in the stack)
#     that name the running function and its caller (cpu2deep: handle
#     under serve); target 95%;
#   - the share of off-CPU time under time.sleep (the napper thread of
#     waits.py, clock_nanosleep) named by its Python caller; target 95%;
#   - the BPF cost per call of the sched_switch and CPU-sample programs on
#     a Python load (twothreads: GIL hand-offs), with and without Python
#     frames (record --no-python), from bpf_stats; capture bytes per event.
#
# Run by run.sh (STKREC, BENCH_TMP, BENCH_TABLE, BENCH_PYTHON_JSON), or
# alone as root from the checkout: tests/bench/python.sh writes
# build/bench/python.txt and python.json. Environment: STKREC, BENCH_OUT
# (build/bench), BENCH_PYTHON_SECONDS (5), PYTHON (/usr/bin/python3.11),
# STKREC_WORKLOADS (build/workloads).
set -euo pipefail

STKREC=$(realpath "${STKREC:-build/stkrec}")
OUT=$(realpath -m "${BENCH_OUT:-build/bench}") # absolute: sections cd
SECS=${BENCH_PYTHON_SECONDS:-5}
PY=${PYTHON:-/usr/bin/python3.11}
WL=$(realpath "${STKREC_WORKLOADS:-build/workloads}")/py
. "$(dirname "$0")/lib.sh"
section python "BPF, bpf_stats"
for t in perf jq bpftool "$PY"; do
	command -v "$t" >/dev/null || die "$t missing (make bench installs it)"
done
[ -f "$WL/cpu2deep.py" ] || die "no $WL/cpu2deep.py (make test-build)"
pct() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", b ? 100 * a / b : 0}'; }
# sum of the folded lines on stdin that match $1 (all when empty)
fsum() { awk -v re="${1:-.}" '$0 ~ re {s += $NF} END {print s + 0}'; }

# 1. CPU samples in Python code naming handle under serve
"$STKREC" record -q -e cpu -F 999 -o "$TMP/cpu.cap" -- "$PY" "$WL/cpu2deep.py" "$SECS" \
	> "$TMP/cpu.ready"
"$STKREC" report --folded -e cpu -i "$TMP/cpu.cap" | grep _PyEval_EvalFrameDefault \
	> "$TMP/cpu.folded" || true
CPU_ALL=$(fsum < "$TMP/cpu.folded")
CPU_NAMED=$(fsum 'serve \(cpu2deep\.py:[0-9]+\);(.*;)?handle \(cpu2deep\.py:[0-9]+\)' < "$TMP/cpu.folded")
perf record -q -F 999 --call-graph dwarf -o "$TMP/cpu.perf" -- "$PY" "$WL/cpu2deep.py" "$SECS" \
	> /dev/null 2>&1
perf script -i "$TMP/cpu.perf" 2>/dev/null > "$TMP/cpu.perfscript"
PERF_ALL=$(grep -c _PyEval_EvalFrameDefault "$TMP/cpu.perfscript" || true)
PERF_NAMED=$(grep -c -E '\bhandle\b' "$TMP/cpu.perfscript" || true)

# 2. off-CPU time of napper under time.sleep named by napper
"$STKREC" record -q -e offcpu -o "$TMP/off.cap" -- "$PY" "$WL/waits.py" "$SECS" > "$TMP/off.ready"
NAPPER=$(grep -o 'napper_tid=[0-9]*' "$TMP/off.ready" | cut -d= -f2)
"$STKREC" report --folded -e offcpu -t "$NAPPER" -i "$TMP/off.cap" | grep clock_nanosleep \
	> "$TMP/off.folded" || true
OFF_ALL=$(fsum < "$TMP/off.folded")
OFF_NAMED=$(fsum 'napper \(waits\.py:[0-9]+\)' < "$TMP/off.folded")

# 3. the programs' cost on a Python load, with and without Python frames
STATS=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -q -w kernel.bpf_stats_enabled=1
# cost TAG OPTS: "switch_ns cpu_ns events bytes"
cost() {
	local tag=$1 tp rp sw cpu
	shift
	"$STKREC" record -e offcpu,cpu -F 999 "$@" -o "$TMP/$tag.cap" -- "$PY" \
		"$WL/twothreads.py" "$SECS" > /dev/null 2> "$TMP/$tag.err" &
	tp=$!
	wait_attached "$tp" "$TMP/$tag.err" || die "record $tag did not attach"
	sleep $((SECS - 1))
	sw=$(prog_stats "$tp" stkrec_switch | awk '{print ($2 > 0) ? int($1 / $2) : 0}')
	cpu=$(prog_stats "$tp" stkrec_cpu | awk '{print ($2 > 0) ? int($1 / $2) : 0}')
	wait "$tp" || die "record $tag failed: $(tail -3 "$TMP/$tag.err")"
	info "$TMP/$tag.cap"
	echo "$sw $cpu $(jget "$TMP/$tag.cap" '.events.offcpu + .events.cpu') \
		$(stat -c %s "$TMP/$tag.cap")"
}
read -r SW_PY CPU_PY EV_PY B_PY < <(cost py)
read -r SW_NO CPU_NO EV_NO B_NO < <(cost nopy --no-python)
sysctl -q -w kernel.bpf_stats_enabled="$STATS"
perf record -q -e cpu-clock -F 999 --call-graph dwarf -o "$TMP/cost.perf" -- "$PY" \
	"$WL/twothreads.py" "$SECS" > /dev/null 2>&1
PERF_B=$(stat -c %s "$TMP/cost.perf")
PERF_EV=$(perf script -i "$TMP/cost.perf" -F event 2>/dev/null | grep -c . || true)

head_ "11. Python frames (Debian's python3.11; perf record --call-graph dwarf beside)"
row "CPU samples in Python code naming handle under serve" \
	"stkrec $CPU_NAMED of $CPU_ALL ($(pct "$CPU_NAMED" "$CPU_ALL")%, target 95%: $(verdict "$(pct "$CPU_NAMED" "$CPU_ALL")" '>=' 95)); perf $PERF_NAMED of $PERF_ALL"
row "off-CPU time in time.sleep named by napper" \
	"$OFF_NAMED of $OFF_ALL us ($(pct "$OFF_NAMED" "$OFF_ALL")%, target 95%: $(verdict "$(pct "$OFF_NAMED" "$OFF_ALL")" '>=' 95)); perf: no Python frames"
row "sched_switch program, ns per call" "$SW_PY with Python frames, $SW_NO without"
row "CPU-sample program, ns per call" "$CPU_PY with Python frames, $CPU_NO without"
row "capture bytes per event" "$(div "$B_PY" "$EV_PY") with, $(div "$B_NO" "$EV_NO") without; perf.data (dwarf, cpu-clock only) $(div "$PERF_B" "$PERF_EV")"
cat > "$JSON" <<EOF
{"cpu_samples": $CPU_ALL, "cpu_named": $CPU_NAMED, "perf_cpu_samples": $PERF_ALL,
 "perf_cpu_named": $PERF_NAMED, "offcpu_us": $OFF_ALL, "offcpu_named_us": $OFF_NAMED,
 "switch_ns_python": $SW_PY, "switch_ns_no_python": $SW_NO, "cpu_ns_python": $CPU_PY,
 "cpu_ns_no_python": $CPU_NO, "bytes_python": $B_PY, "events_python": $EV_PY,
 "bytes_no_python": $B_NO, "events_no_python": $EV_NO, "perf_bytes": $PERF_B,
 "perf_events": $PERF_EV}
EOF
