# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# What the scripts of make bench share, sourced by each (run.sh, unwind.sh,
# pack.sh, wakeup.sh, export.sh): the table they print to ($TABLE),
# numbers, verdicts, the capture counts from `stkrec info --json`
# ($STKREC), a section's scratch directory, when a recorder has attached
# and what its BPF programs cost.

die() { echo "bench: $*" >&2; exit 1; }
# the median of numbers on stdin; an even count averages the middle two
median() { sort -n | awk '{a[NR]=$1} END {
	if (NR == 0) { print 0; exit }
	if (NR % 2) { print a[(NR+1)/2]; exit }
	s = sprintf("%.4f", (a[NR/2] + a[NR/2+1]) / 2); sub(/\.?0+$/, "", s); print s }'; }
# perf bench sched pipe's ops/s from its output on stdin
ops() { awk '/ops\/sec/ {v=$1} END {print v+0}'; }
div() { awk -v a="$1" -v b="$2" -v f="${3:-%.2f}" 'BEGIN {printf f, (b != 0) ? a / b : 0}'; }
row() { printf '%-44s %s\n' "$1" "$2" | tee -a "$TABLE"; }
head_() { printf '\n== %s\n' "$1" | tee -a "$TABLE"; }
note() { echo "  $*" | tee -a "$TABLE"; }
# PASS when "A OP B" holds (awk numbers)
verdict() { awk -v a="$1" -v b="$3" -v op="$2" 'BEGIN {
	ok = (op == "<=") ? a <= b : (op == ">=") ? a >= b : 0
	print ok ? "PASS" : "MISS" }'; }
# stkrec info --json: one object, "events" and "lost" per kind
info() { "$STKREC" info --json "$1" > "$1.json" || die "stkrec info $1 failed"; }
jget() { jq -r "$2" "$1.json"; }
nevents() { jget "$1" '.events.offcpu + .events.cpu + .events.bio'; }
# "lost": dropped (ring buffer full, state table full, side band) plus the
# runs the kernel skipped (not_run: bpf.skipped.*, bio.missed_completions);
# stacks missed (events kept without a stack) are shown apart.
nlost() { jget "$1" '.lost.offcpu + .lost.cpu + .lost.bio + .lost.sideband + .not_run'; }
# section_tmp NAME: TMP is $BENCH_TMP/NAME under run.sh, else a directory
# of the section's own, removed at exit.
section_tmp() {
	if [ -n "${BENCH_TMP:-}" ]; then
		TMP=$BENCH_TMP/$1
		mkdir -p "$TMP"
	else
		TMP=$(mktemp -d "/var/tmp/stkrec-bench-$1.XXXXXX")
		trap 'rm -rf "$TMP"' EXIT
	fi
}
# section NAME WHY: a section script's setup. TMP (section_tmp); TABLE,
# run.sh's or else OUT/NAME.txt (emptied); JSON, where BENCH_<NAME>_JSON
# says or else OUT/NAME.json; root (for WHY) and $STKREC checked.
section() {
	local var
	var="BENCH_$(echo "$1" | tr '[:lower:]' '[:upper:]')_JSON"
	mkdir -p "$OUT"
	section_tmp "$1"
	TABLE=${BENCH_TABLE:-$OUT/$1.txt}
	JSON=${!var:-$OUT/$1.json}
	[ -n "${BENCH_TABLE:-}" ] || : > "$TABLE"
	[ "$(id -u)" = 0 ] || die "needs root ($2)"
	[ -x "$STKREC" ] || die "no stkrec binary at $STKREC"
}
# -a records the whole host: another busy program skews every figure.
idle_warning() {
	local idle
	idle=$(vmstat 1 2 | awk 'END {print $15}')
	[ "$idle" -ge 90 ] ||
		note "warning: the host was only $idle% idle before the start; figures include that load"
}
# wait_attached PID ERR: until the recorder PID (or a wrapper of it, such
# as /usr/bin/time), its stderr in the file ERR, says it is recording (the
# line "stkrec: recording ...", printed once every program is attached);
# 1 when PID exits first or after 120 s, a bound on a hang. With
# --call-graph dwarf the load takes ~2 s (the verifier, every process's
# rows): a load started after a fixed pause would run partly unrecorded.
wait_attached() {
	for _ in $(seq 1200); do
		grep -q '^stkrec: recording ' "$2" 2>/dev/null && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
# stop_load PID: a load started in the background, and what it forked (perf
# bench sched pipe's worker outlives its parent, and would load every
# section after)
stop_load() {
	pkill -P "$1" 2>/dev/null || true
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}
# the BPF program ids the recorder PID holds
prog_ids() { grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u; }
# "run_time_ns run_cnt" of the recorder PID's program NAME (the raw_tp
# variant's name starts the same; bpftool shows 15 characters)
prog_stats() {
	local id
	for id in $(prog_ids "$1"); do
		bpftool prog show id "$id" -j 2>/dev/null || true
	done | jq -s -r --arg n "$2" '[.[] | select(.name | startswith($n))] |
		if length > 0 then "\(.[0].run_time_ns // 0) \(.[0].run_cnt // 0)" else "0 0" end'
}
