#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make bench, section 13: the flight recorder (record --flight-recorder).
# 13a the recorder's CPU per 1M events and its peak memory, flight mode
#     against a normal recording of the same load (perf bench sched pipe,
#     unpinned, SECS seconds, record -a -e offcpu,cpu; the flight recorder
#     with a trigger that never fires, so that no dump is in its cost).
#     Memory: peak RSS, and for the flight recorder the segments it held
#     in memfds at most (its summary), which RSS does not count.
# 13b a 30 s window of the same load dumped on SIGUSR2: the time from the
#     signal to the file complete (the dump line's), and the dump's size.
#
# Run by run.sh (STKREC, BENCH_TMP, BENCH_TABLE, BENCH_FLIGHT_JSON), or
# alone as root from the checkout: tests/bench/flight.sh writes
# build/bench/flight.txt and flight.json. Environment: STKREC, BENCH_OUT
# (build/bench), BENCH_FLIGHT_SECS (15), BENCH_FLIGHT_ROUNDS (3).
set -euo pipefail

STKREC=$(realpath "${STKREC:-build/stkrec}")
OUT=$(realpath -m "${BENCH_OUT:-build/bench}") # absolute: sections cd
SECS=${BENCH_FLIGHT_SECS:-15}
ROUNDS=${BENCH_FLIGHT_ROUNDS:-3}
# shellcheck source=tests/bench/lib.sh
. "$(dirname "$0")/lib.sh"
section flight "BPF"
for t in perf jq /usr/bin/time; do
	command -v "$t" >/dev/null || die "$t missing (make bench installs it)"
done
[ -n "${BENCH_TABLE:-}" ] || idle_warning
head_ "13. flight recorder: cost and memory against a normal recording ($SECS s of perf bench sched pipe, unpinned, $ROUNDS rounds, medians); a 30 s window dumped"

LOAD=
trap '[ -z "${LOAD:-}" ] || stop_load "$LOAD"; [ -n "${BENCH_TMP:-}" ] || rm -rf "$TMP"' EXIT
# events the summary counts ("events: N off-CPU, M CPU, ...")
events_of() { awk '/^  events:/ {print $2 + $4; exit}' "$1"; }
# the summary's "at most 12.3 MiB held" in kB
held_kb() { sed -n 's/.*at most \([0-9.]*\) \([KM]*i*B\) held.*/\1 \2/p' "$1" |
	awk '{m = ($2 == "MiB") ? 1024 : ($2 == "KiB") ? 1 : 1 / 1024; printf "%.0f", $1 * m}'; }

# one recording of SECS s of the pipe load: "cpu_s events rss_kb held_kb"
one() {
	local mode=$1 rp held=0
	rm -rf "$TMP/one" && mkdir -p "$TMP/one"
	if [ "$mode" = flight ]; then
		set -- --flight-recorder 30s --trigger 'wait>=1h'
	else
		set -- --no-pack
	fi
	/usr/bin/time -f '%U %S %M' -o "$TMP/one/time" \
		"$STKREC" record -a -e offcpu,cpu -o "$TMP/one/c.cap" -d "$SECS" "$@" \
		2> "$TMP/one/err" &
	rp=$!
	wait_attached "$rp" "$TMP/one/err" || die "stkrec record did not attach: $(tail -3 "$TMP/one/err")"
	perf bench sched pipe -l 100000000 > /dev/null 2>&1 &
	LOAD=$!
	wait "$rp" || die "stkrec record failed: $(tail -3 "$TMP/one/err")"
	stop_load "$LOAD"
	if [ "$mode" = flight ]; then
		held=$(held_kb "$TMP/one/err")
	fi
	awk -v e="$(events_of "$TMP/one/err")" -v h="$held" '{print $1 + $2, e, $3, h}' "$TMP/one/time"
}

: > "$TMP/normal"; : > "$TMP/flight"
for i in $(seq "$ROUNDS"); do
	one normal >> "$TMP/normal"
	one flight >> "$TMP/flight"
done
per1m() { awk '{print ($2 > 0) ? $1 / $2 * 1e6 : 0}' "$1" | median; }
col() { awk -v c="$2" '{print $c}' "$1" | median; }
NC=$(per1m "$TMP/normal"); FC=$(per1m "$TMP/flight")
NE=$(col "$TMP/normal" 2); FE=$(col "$TMP/flight" 2)
NR=$(col "$TMP/normal" 3); FR=$(col "$TMP/flight" 3); FH=$(col "$TMP/flight" 4)
row "recorder CPU per 1M events" "normal $(printf %.3f "$NC") s, flight $(printf %.3f "$FC") s ($(div "$FC" "$NC")x); events $NE, $FE"
row "peak memory" "normal RSS $NR kB; flight RSS $FR kB + $FH kB of segments held = $((FR + FH)) kB"

# --- 13b. a 30 s window, dumped -------------------------------------------------------
rm -rf "$TMP/dump" && mkdir -p "$TMP/dump"
"$STKREC" record -a -e offcpu,cpu -o "$TMP/dump/d.cap" --flight-recorder 30s \
	--trigger 'wait>=1h' 2> "$TMP/dump/err" &
rp=$!
wait_attached "$rp" "$TMP/dump/err" || die "stkrec record did not attach: $(tail -3 "$TMP/dump/err")"
perf bench sched pipe -l 100000000 > /dev/null 2>&1 &
LOAD=$!
sleep 33
kill -USR2 "$rp"
for _ in $(seq 600); do
	grep -q '^stkrec: dump 1: ' "$TMP/dump/err" && break
	sleep 0.1
done
stop_load "$LOAD"
kill -INT "$rp"
wait "$rp" || die "stkrec record failed: $(tail -3 "$TMP/dump/err")"
LINE=$(grep '^stkrec: dump 1: ' "$TMP/dump/err") || die "no dump: $(tail -3 "$TMP/dump/err")"
LAT=$(sed -n 's/.*complete \([0-9.]*\) s after it.*/\1/p' <<< "$LINE")
F=$(ls "$TMP"/dump/d.cap.* | head -1)
SIZE=$(stat -c %s "$F")
DEV=$(sed -n 's/.* \([0-9]*\) events.*/\1/p' <<< "$LINE")
row "SIGUSR2 to the dump complete" "$LAT s"
row "dump of a 30 s window" "$(div "$SIZE" 1048576) MiB, $DEV events, $(div "$SIZE" "$DEV" %.1f) B/event"

jq -n --argjson secs "$SECS" --argjson nc "$NC" --argjson fc "$FC" --argjson nr "$NR" \
	--argjson fr "$FR" --argjson fh "$FH" --argjson lat "${LAT:-0}" --argjson size "$SIZE" \
	--argjson dev "${DEV:-0}" \
	'{secs: $secs, cpu_s_per_1m_events: {normal: $nc, flight: $fc},
	  peak_kb: {normal_rss: $nr, flight_rss: $fr, flight_held: $fh},
	  dump: {latency_s: $lat, bytes: $size, events: $dev}}' > "$JSON"
[ -n "${BENCH_FLIGHT_JSON:-}" ] || echo "results: $JSON, table: $TABLE"
