#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make bench, section 10: how soon the recorder stops, the figures the
# tests bound only as hangs (a test sharing two CPUs cannot time them):
# 10a a reader of record -o - that goes away: from its close to the
#     recorder's exit, recording a process asleep (blocks are rare, so the
#     recorder must notice the pipe itself, EPOLLERR, not its next write),
#     the reader gone at a random moment. Target: each <= 0.25 s (README:
#     "stops the recording at once"; tests/test_reliability_pipe.c).
# 10b SIGKILL under a CPU load (stress-ng --cpu 1, record -a -e cpu -F 999,
#     killed at a random moment 2-3 s after the attach): from the kill to
#     the newest event the capture reads back. Target: each <= 1.5 s
#     (README: "at most the last ~1 s of events is lost";
#     tests/test_reliability_record.c).
#
# Run by run.sh (STKREC, BENCH_TMP, BENCH_TABLE, BENCH_STOP_JSON), or alone
# as root from the checkout: tests/bench/stop.sh writes build/bench/stop.txt
# and stop.json. Environment: STKREC, BENCH_OUT (build/bench),
# BENCH_STOP_ROUNDS (5).
set -euo pipefail

STKREC=$(realpath "${STKREC:-build/stkrec}")
OUT=$(realpath -m "${BENCH_OUT:-build/bench}") # absolute: sections cd
ROUNDS=${BENCH_STOP_ROUNDS:-5}
# shellcheck source=tests/bench/lib.sh
. "$(dirname "$0")/lib.sh"
section stop "BPF"
for t in stress-ng jq timeout; do
	command -v "$t" >/dev/null || die "$t missing (make bench installs it)"
done
# the wall clock in ns, a bash builtin: no process start in the figures
now() { echo "${EPOCHREALTIME/./}000"; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f\n", (b - a) / 1e9}'; }
worst() { sort -n | tail -1; }
[ -n "${BENCH_TABLE:-}" ] || idle_warning
head_ "10. how soon the recorder stops: its -o - reader gone, a SIGKILL; $ROUNDS rounds each"

# --- 10a. the reader goes away ---------------------------------------------------
sleep 1000 &
SLEEPER=$!
LOAD=
trap 'kill $SLEEPER $LOAD 2>/dev/null || true; [ -n "${BENCH_TMP:-}" ] || rm -rf "$TMP"' EXIT
: > "$TMP/gone"
for i in $(seq "$ROUNDS"); do
	rm -f "$TMP/fifo"
	mkfifo "$TMP/fifo"
	"$STKREC" record -o - --no-pack -p "$SLEEPER" -e offcpu -d 120 \
		> "$TMP/fifo" 2> "$TMP/gone.err" &
	rp=$!
	exec 3< "$TMP/fifo"
	wait_attached "$rp" "$TMP/gone.err" ||
		die "stkrec record -o - did not attach: $(tail -3 "$TMP/gone.err")"
	# read 1-2 s more, then go
	timeout "1.$((RANDOM % 1000))" cat <&3 > /dev/null || true
	s=$(now)
	exec 3<&-
	st=0
	wait "$rp" || st=$?
	e=$(now)
	[ "$st" = 1 ] || die "stkrec record -o -: exit $st with its reader gone: $(tail -3 "$TMP/gone.err")"
	secs "$s" "$e" >> "$TMP/gone"
done
GM=$(median < "$TMP/gone"); GW=$(worst < "$TMP/gone")
VG=$(verdict "$GW" "<=" 0.25)
row "reader of -o - gone: to the recorder's exit" "median $GM s, worst $GW s ($(tr '\n' ' ' < "$TMP/gone")) target each <= 0.25 s: $VG"

# --- 10b. SIGKILL: the events lost -----------------------------------------------------
stress-ng --cpu 1 -t 600 > /dev/null 2>&1 &
LOAD=$!
# the newest CPU sample's time in CAP on the wall clock, in ns: the
# capture's start (its header's wall clock, to the ms) plus the sample's
# seconds from it (script's)
newest() {
	local start t
	start=$("$STKREC" info --json "$1" 2>/dev/null | jq -r '(.start | sub("\\.[0-9]+Z$"; "Z") |
		fromdateiso8601) + (.start | capture("\\.(?<f>[0-9]+)Z$").f | "0." + . | tonumber)') || true
	t=$("$STKREC" script -i "$1" 2>/dev/null |
		awk '{for (i = 1; i < NF; i++) if ($(i + 1) == "cpu:") {sub(":", "", $i); if ($i + 0 > m) m = $i + 0}} END {printf "%.6f", m}') || true
	awk -v s="$start" -v t="$t" 'BEGIN {printf "%.0f", (s + t) * 1e9}'
}
: > "$TMP/kill"
for i in $(seq "$ROUNDS"); do
	rm -f "$TMP/kill.cap"
	"$STKREC" record -a -e cpu -F 999 -o "$TMP/kill.cap" 2> "$TMP/kill.err" &
	rp=$!
	wait_attached "$rp" "$TMP/kill.err" ||
		die "stkrec record did not attach: $(tail -3 "$TMP/kill.err")"
	sleep "2.$((RANDOM % 1000))"
	k=$(now)
	kill -9 "$rp"
	wait "$rp" 2>/dev/null || true
	n=$(newest "$TMP/kill.cap")
	secs "$n" "$k" >> "$TMP/kill"
done
KM=$(median < "$TMP/kill"); KW=$(worst < "$TMP/kill")
VK=$(verdict "$KW" "<=" 1.5)
row "SIGKILL: kill to the newest event read back" "median $KM s, worst $KW s ($(tr '\n' ' ' < "$TMP/kill")) target each <= 1.5 s: $VK"

jq -n --argjson rounds "$ROUNDS" --argjson gm "$GM" --argjson gw "$GW" --arg vg "$VG" \
	--argjson km "$KM" --argjson kw "$KW" --arg vk "$VK" \
	'{rounds: $rounds,
	  reader_gone_s: {median: $gm, worst: $gw, target: 0.25, verdict: $vg},
	  sigkill_events_lost_s: {median: $km, worst: $kw, target: 1.5, verdict: $vk}}' > "$JSON"
[ -n "${BENCH_STOP_JSON:-}" ] || echo "results: $JSON, table: $TABLE"
