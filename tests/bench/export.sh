#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make bench, section 7: the exports for other viewers (report --pprof,
# --speedscope, --chrome-trace) on two captures of one load, the second
# about twice the first: wall time (median of runs, a new file each run),
# peak RSS and file size, with report --folded beside them (the same
# loading and naming, one line per stack). Targets (issue 18): a capture
# of 1M events or more exports in at most 3 s; time and memory grow
# linearly (the second capture's figures over the first's, against the
# ratio of their events).
#
# The load: two pipe pairs (perf bench sched pipe) under record -a -F 999,
# as section 4; mostly off-CPU intervals with ~20-frame stacks.
#
# Run by run.sh (which passes STKREC, BENCH_TMP, BENCH_TABLE and
# BENCH_EXPORT_JSON), or alone as root from the checkout:
# tests/bench/export.sh writes build/bench/export.txt and export.json.
# Environment: STKREC, BENCH_OUT (default build/bench), BENCH_EXPORT_SECONDS
# (length of the first recording, default 7: ~1.2M events here; the second
# is twice as long), BENCH_REPORT_RUNS (default 3).
set -euo pipefail

STKREC=$(realpath "${STKREC:-build/stkrec}")
OUT=${BENCH_OUT:-build/bench}
SECONDS1=${BENCH_EXPORT_SECONDS:-7}
RUNS=${BENCH_REPORT_RUNS:-3}
mkdir -p "$OUT"
if [ -n "${BENCH_TMP:-}" ]; then
	TMP=$BENCH_TMP/export
	mkdir -p "$TMP"
else
	TMP=$(mktemp -d /var/tmp/stkrec-bench-export.XXXXXX)
	trap 'rm -rf "$TMP"' EXIT
fi
TABLE=${BENCH_TABLE:-$OUT/export.txt}
JSON=${BENCH_EXPORT_JSON:-$OUT/export.json}
[ -n "${BENCH_TABLE:-}" ] || : > "$TABLE"

die() { echo "bench: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (record -a)"
[ -x "$STKREC" ] || die "no stkrec binary at $STKREC"
for t in perf jq timeout /usr/bin/time; do
	command -v "$t" >/dev/null || die "$t missing"
done

median() { sort -n | awk '{a[NR]=$1} END {if (NR==0) {print 0} else if (NR%2) {print a[(NR+1)/2]} else {printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}}'; }
div() { awk -v a="$1" -v b="$2" -v f="${3:-%.2f}" 'BEGIN {printf f, (b != 0) ? a / b : 0}'; }
row() { printf '%-44s %s\n' "$1" "$2" | tee -a "$TABLE"; }
head_() { printf '\n== %s\n' "$1" | tee -a "$TABLE"; }
note() { echo "  $*" | tee -a "$TABLE"; }
nevents() { "$STKREC" info --json "$1" | jq -r '.events.offcpu + .events.cpu + .events.bio'; }
verdict() { awk -v a="$1" -v b="$3" -v op="$2" 'BEGIN {
	ok = (op == "<=") ? a <= b : (op == ">=") ? a >= b : 0
	print ok ? "PASS" : "MISS" }'; }

# record SECONDS FILE: the pipe pairs for all but the first and last second
record() {
	local pids=() i
	"$STKREC" record -a -F 999 -d "$1" -o "$2" 2>"$2.err" &
	local rec=$!
	sleep 1
	for i in 1 2; do
		timeout "$(($1 - 2))" perf bench sched pipe -l 1000000000 >/dev/null 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}" || true # timeout's 124 is the normal end
	wait "$rec" || die "stkrec record failed: $(cat "$2.err")"
}

# measure CAPTURE ARGS...: "SECONDS KIB BYTES" of `report -i CAPTURE ARGS
# FILE`, the median time and the largest peak RSS of RUNS runs, each
# writing a new file (report --folded: to stdout, into FILE).
measure() {
	local cap=$1 i t0 t1 rss=0 r
	shift
	for i in $(seq "$RUNS"); do
		rm -f "$TMP/out"
		t0=$(date +%s.%N)
		if [ "$1" = --folded ]; then
			/usr/bin/time -f %M -o "$TMP/rss" "$STKREC" report -i "$cap" "$@" \
				>"$TMP/out" 2>/dev/null || die "report $* failed"
		else
			/usr/bin/time -f %M -o "$TMP/rss" "$STKREC" report -i "$cap" "$@" "$TMP/out" \
				2>/dev/null || die "report $* failed"
		fi
		t1=$(date +%s.%N)
		awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", b - a}' >> "$TMP/times"
		r=$(tail -1 "$TMP/rss")
		[ "$r" -gt "$rss" ] && rss=$r
	done
	echo "$(median < "$TMP/times") $rss $(stat -c %s "$TMP/out")"
	rm -f "$TMP/times" "$TMP/out"
}

IDLE=$(vmstat 1 2 | awk 'END {print $15}')
[ "$IDLE" -ge 90 ] ||
	note "warning: the host was only $IDLE% idle before the start; figures include that load"

SECONDS2=$((2 * SECONDS1 - 2)) # twice the pipes' time
record "$SECONDS1" "$TMP/a.cap"
record "$SECONDS2" "$TMP/b.cap"
EA=$(nevents "$TMP/a.cap"); EB=$(nevents "$TMP/b.cap")
XE=$(div "$EB" "$EA")
head_ "7. exports: report --pprof, --speedscope, --chrome-trace FILE; captures of $EA and $EB events (x$XE) of 2 pipe pairs under record -a -F 999; median of $RUNS runs, a new file each"
[ "$EA" -ge 1000000 ] || note "warning: the first capture has fewer than 1M events; raise BENCH_EXPORT_SECONDS"

: > "$TMP/json"
for view in pprof speedscope chrome-trace folded; do
	read -r TA RA BA <<< "$(measure "$TMP/a.cap" "--$view")"
	read -r TB RB BB <<< "$(measure "$TMP/b.cap" "--$view")"
	XT=$(div "$TB" "$TA"); XR=$(div "$RB" "$RA")
	PER=$(div "$TA" "$(div "$EA" 1000000 %.6f)" %.2f)
	if [ "$view" = folded ]; then
		V="(for reference)"
	else
		V="target <= 3 s at >= 1M events: $(verdict "$TA" "<=" 3)"
	fi
	row "--$view" "$TA s, $((RA / 1024)) MiB, $((BA / 1024 / 1024)) MiB out ($PER s per 1M events); $TB s, $((RB / 1024)) MiB, $((BB / 1024 / 1024)) MiB out; time x$XT, RSS x$XR for events x$XE; $V"
	jq -n -c --arg v "$view" --argjson ta "$TA" --argjson ra "$RA" --argjson ba "$BA" \
		--argjson tb "$TB" --argjson rb "$RB" --argjson bb "$BB" \
		'{($v): {small: {s: $ta, rss_kib: $ra, bytes: $ba},
			 large: {s: $tb, rss_kib: $rb, bytes: $bb}}}' >> "$TMP/json"
done
note "(time x and RSS x: the larger capture's figure over the smaller's; linear growth is the events' x)"
jq -s --argjson ea "$EA" --argjson eb "$EB" '{events: {small: $ea, large: $eb}, target_s: 3,
	views: add}' "$TMP/json" > "$JSON"
[ -n "${BENCH_EXPORT_JSON:-}" ] || echo "results: $JSON, table: $TABLE"
