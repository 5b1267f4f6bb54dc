#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make bench, section 9: the exports for other viewers (report --pprof,
# --speedscope, --chrome-trace) on two captures of one load, the second
# about twice the first: wall time (median of runs, a new file each run),
# peak RSS and file size, with report --folded beside them (the same
# loading and naming, one line per stack). Targets (issue 18): a capture
# of 1M events exports in at most 3 s (judged per 1M events of the first
# capture, which should hold 1M or more); time and memory grow linearly
# (the second capture's figures over the first's, against the ratio of
# their events). Past the kernel's dirty page limits (a few GB), writing
# speedscope's file goes at the disk's speed, not the exporter's.
#
# The load: two pipe pairs (perf bench sched pipe), as section 4, but
# recorded as a command (record -F 999 -- sh -c ...), so that whatever else
# runs on the host adds neither events nor stacks; mostly off-CPU intervals
# with ~20-frame stacks.
#
# Run by run.sh (which passes STKREC, BENCH_TMP, BENCH_TABLE and
# BENCH_EXPORT_JSON), or alone as root from the checkout:
# tests/bench/export.sh writes build/bench/export.txt and export.json.
# Environment: STKREC, BENCH_OUT (default build/bench), BENCH_EXPORT_SECONDS
# (how long the pipes run for the first capture, default 8: 1-2M events
# here, as busy as the host lets them be; twice that for the second), BENCH_REPORT_RUNS (default 3).
set -euo pipefail

STKREC=$(realpath "${STKREC:-build/stkrec}")
OUT=$(realpath -m "${BENCH_OUT:-build/bench}") # absolute: sections cd
SECONDS1=${BENCH_EXPORT_SECONDS:-8}
RUNS=${BENCH_REPORT_RUNS:-3}
# shellcheck source=tests/bench/lib.sh
. "$(dirname "$0")/lib.sh"
section export "record -a"
for t in perf jq timeout /usr/bin/time; do
	command -v "$t" >/dev/null || die "$t missing"
done

# record SECONDS FILE: two pipe pairs for SECONDS, and nothing else
record() {
	local pipe="timeout $1 perf bench sched pipe -l 1000000000 >/dev/null 2>&1"

	# timeout's 124 is the normal end
	"$STKREC" record -F 999 -o "$2" -- sh -c "$pipe & $pipe & wait; true" 2>"$2.err" ||
		die "stkrec record failed: $(cat "$2.err")"
}

# measure OUT CAPTURE ARGS...: "SECONDS KIB BYTES" of `report -i CAPTURE
# ARGS OUT` (report --folded: > OUT), the median wall time and the largest
# peak RSS of RUNS runs, OUT removed before each (but /dev/null).
measure() {
	local out=$1 cap=$2 i t0 t1 rss=0 r
	shift 2
	for i in $(seq "$RUNS"); do
		[ "$out" = /dev/null ] || rm -f "$out"
		t0=$(date +%s.%N)
		if [ "$1" = --folded ]; then
			/usr/bin/time -f %M -o "$TMP/rss" "$STKREC" report -i "$cap" "$@" \
				>"$out" 2>/dev/null || die "report $* failed"
		else
			/usr/bin/time -f %M -o "$TMP/rss" "$STKREC" report -i "$cap" "$@" "$out" \
				2>/dev/null || die "report $* failed"
		fi
		t1=$(date +%s.%N)
		awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", b - a}' >> "$TMP/times"
		r=$(tail -1 "$TMP/rss")
		[ "$r" -gt "$rss" ] && rss=$r
	done
	echo "$(median < "$TMP/times") $rss $(stat -c %s "$out")"
	rm -f "$TMP/times"
	[ "$out" = /dev/null ] || rm -f "$out"
}

idle_warning

record "$SECONDS1" "$TMP/a.cap"
record "$((2 * SECONDS1))" "$TMP/b.cap"
info "$TMP/a.cap"; info "$TMP/b.cap"
EA=$(nevents "$TMP/a.cap"); EB=$(nevents "$TMP/b.cap")
XE=$(div "$EB" "$EA")
head_ "9. exports: report --pprof, --speedscope, --chrome-trace FILE; captures of $EA and $EB events (x$XE) of 2 pipe pairs (record -F 999 -- the pairs); median of $RUNS runs, a new file each"
[ "$EA" -ge 1000000 ] || note "warning: the first capture has fewer than 1M events; raise BENCH_EXPORT_SECONDS"

: > "$TMP/json"
for view in pprof speedscope chrome-trace folded; do
	read -r TA RA BA <<< "$(measure "$TMP/out" "$TMP/a.cap" "--$view")"
	read -r TB RB BB <<< "$(measure "$TMP/out" "$TMP/b.cap" "--$view")"
	read -r NA _ _ <<< "$(measure /dev/null "$TMP/a.cap" "--$view")"
	read -r NB _ _ <<< "$(measure /dev/null "$TMP/b.cap" "--$view")"
	XT=$(div "$TB" "$TA"); XR=$(div "$RB" "$RA"); XN=$(div "$NB" "$NA")
	PER=$(div "$TA" "$(div "$EA" 1000000 %.6f)" %.2f)
	if [ "$view" = folded ]; then
		V="(for reference)"
	else
		V="target <= 3 s per 1M events: $(verdict "$PER" "<=" 3)"
	fi
	row "--$view" "$TA s, $((RA / 1024)) MiB, $((BA / 1024 / 1024)) MiB out ($PER s per 1M events); $TB s, $((RB / 1024)) MiB, $((BB / 1024 / 1024)) MiB out; time x$XT, RSS x$XR for events x$XE; $V"
	row "  into /dev/null" "$NA s; $NB s; time x$XN"
	jq -n -c --arg v "$view" --argjson ta "$TA" --argjson ra "$RA" --argjson ba "$BA" \
		--argjson tb "$TB" --argjson rb "$RB" --argjson bb "$BB" \
		--argjson na "$NA" --argjson nb "$NB" \
		'{($v): {small: {s: $ta, rss_kib: $ra, bytes: $ba, devnull_s: $na},
			 large: {s: $tb, rss_kib: $rb, bytes: $bb, devnull_s: $nb}}}' >> "$TMP/json"
done
note "(time x and RSS x: the larger capture's figure over the smaller's; linear growth is the events' x;"
note " into /dev/null: the same without the file system, which past its dirty page limits writes at the disk's speed)"
jq -s --argjson ea "$EA" --argjson eb "$EB" '{events: {small: $ea, large: $eb}, target_s: 3,
	views: add}' "$TMP/json" > "$JSON"
[ -n "${BENCH_EXPORT_JSON:-}" ] || echo "results: $JSON, table: $TABLE"
