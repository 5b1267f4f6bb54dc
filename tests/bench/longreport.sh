#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make bench, section 16: reports of long captures (issue 30, part 6).
# `record -- burst pipe 2 SECONDS` (a few million off-CPU intervals a
# second over the same few stacks) for N s and for 3N s; then, of each
# capture, the wall time and peak RSS of `report`, `report -g`,
# `--folded`, `--top-waits` and `--pprof` (median of ROUNDS runs each).
# Targets, each printed with PASS or MISS:
#   time: the longer capture's time scaled to 31.7M events (the issue's
#     capture) at most 1 s;
#   memory: peak RSS at most 200 MB, and the longer capture's over the
#     shorter's at most 1.2 (flat in the events).
# Run by run.sh (STKREC, BENCH_TMP, BENCH_TABLE, BENCH_LONGREPORT_JSON),
# or alone as root from the checkout: tests/bench/longreport.sh writes
# build/bench/longreport.txt and longreport.json. Environment: STKREC,
# STKREC_WORKLOADS (build/workloads), BENCH_OUT (build/bench),
# BENCH_LONGREPORT_SECONDS (N, 5), BENCH_LONGREPORT_ROUNDS (5).
set -euo pipefail

STKREC=$(realpath "${STKREC:-build/stkrec}")
WORKLOADS=${STKREC_WORKLOADS:-build/workloads}
OUT=$(realpath -m "${BENCH_OUT:-build/bench}") # absolute: sections cd
N=${BENCH_LONGREPORT_SECONDS:-5}
ROUNDS=${BENCH_LONGREPORT_ROUNDS:-5}
ISSUE_EVENTS=31700000
# shellcheck source=tests/bench/lib.sh
. "$(dirname "$0")/lib.sh"
section longreport BPF
for t in jq zstd /usr/bin/time; do
	command -v "$t" >/dev/null || die "$t missing (make bench installs it)"
done
[ -x "$WORKLOADS/burst" ] || [ ! -f Makefile ] ||
	make --no-print-directory "$WORKLOADS/burst" >&2 || true
[ -x "$WORKLOADS/burst" ] || die "no $WORKLOADS/burst (make workloads)"
head_ "16. reports of long captures: record -- burst pipe 2 for $N s and $((3 * N)) s"

# capture TAG SECONDS: the load recorded, its event count
capture() {
	"$STKREC" record -q -o "$TMP/$1.cap" -- "$WORKLOADS/burst" pipe 2 "$2" \
		>/dev/null 2>"$TMP/$1.err" || die "stkrec record failed: $(tail -3 "$TMP/$1.err")"
	info "$TMP/$1.cap"
	nevents "$TMP/$1.cap"
}
# once CAP ARGS...: "seconds peak-KiB" of stkrec ARGS -i CAP; the wall time
# to the millisecond (time's %e has 10 ms, 7% of a 0.15 s run)
once() {
	local cap=$1 s e
	shift
	s=$(date +%s.%N)
	/usr/bin/time -f '%M' -o "$TMP/t" "$STKREC" "$@" -i "$cap" >/dev/null 2>&1 ||
		die "stkrec $* failed"
	e=$(date +%s.%N)
	awk -v s="$s" -v e="$e" -v k="$(cat "$TMP/t")" 'BEGIN {printf "%.3f %d\n", e - s, k}'
}
# col FILE N: the median of column N
col() { cut -d' ' -f"$2" "$1" | median; }

ES=$(capture short "$N")
EL=$(capture long $((3 * N)))
row "captures" "$ES and $EL events ($(du -k "$TMP/short.cap" | cut -f1) and $(du -k "$TMP/long.cap" | cut -f1) KiB)"
VIEWS=("report" "report -g" "report --folded" "report --top-waits" "report --pprof /dev/null")
# rounds outside, views inside: a slow minute of the host falls on every view
for r in $(seq "$ROUNDS"); do
	for i in "${!VIEWS[@]}"; do
		# shellcheck disable=SC2086 # a view's words
		once "$TMP/short.cap" ${VIEWS[$i]} >> "$TMP/m.$i.short"
		# shellcheck disable=SC2086
		once "$TMP/long.cap" ${VIEWS[$i]} >> "$TMP/m.$i.long"
	done
	s=$(date +%s.%N)
	zstd -dcq "$TMP/long.cap" > /dev/null || die "zstd -d failed on the capture"
	e=$(date +%s.%N)
	awk -v s="$s" -v e="$e" 'BEGIN {printf "%.3f\n", e - s}' >> "$TMP/m.zstd"
done
TZ=$(median < "$TMP/m.zstd")
row "decompression alone" "zstd -dc of the longer capture: $TZ s, $(awk -v t="$TZ" -v e="$EL" 'BEGIN {printf "%.0f", t * 1e9 / e}') ns/event"
echo '[]' > "$TMP/rows.json"
for i in "${!VIEWS[@]}"; do
	v=${VIEWS[$i]}
	TS=$(col "$TMP/m.$i.short" 1); KS=$(col "$TMP/m.$i.short" 2)
	TL=$(col "$TMP/m.$i.long" 1); KL=$(col "$TMP/m.$i.long" 2)
	SCALED=$(awk -v t="$TL" -v e="$EL" -v n="$ISSUE_EVENTS" 'BEGIN {printf "%.2f", e ? t * n / e : 0}')
	NS=$(awk -v t="$TL" -v e="$EL" 'BEGIN {printf "%.0f", e ? t * 1e9 / e : 0}')
	GROW=$(div "$KL" "$KS")
	MB=$(awk -v k="$KL" 'BEGIN {printf "%.1f", k / 1024}')
	row "$v" "$TS s / $TL s ($NS ns/event); at 31.7M events ~$SCALED s ($(verdict "$SCALED" "<=" 1) <= 1 s); peak $MB MB ($(verdict "$MB" "<=" 200) <= 200), x$GROW short to long ($(verdict "$GROW" "<=" 1.2) <= 1.2)"
	jq --arg v "$v" --argjson ts "$TS" --argjson tl "$TL" --argjson ks "$KS" \
		--argjson kl "$KL" --argjson sc "$SCALED" --argjson ns "$NS" \
		'. + [{view: $v, seconds_short: $ts, seconds_long: $tl, peak_kib_short: $ks,
		       peak_kib_long: $kl, seconds_at_31_7M: $sc, ns_per_event_long: $ns}]' \
		"$TMP/rows.json" > "$TMP/rows.new" && mv "$TMP/rows.new" "$TMP/rows.json"
done
note "(median of $ROUNDS rounds, the views taken in turn in each; time scaled linearly from the longer capture)"
jq --argjson es "$ES" --argjson el "$EL" --argjson rounds "$ROUNDS" --argjson tz "$TZ" \
	'{events_short: $es, events_long: $el, rounds: $rounds, zstd_seconds_long: $tz, views: .}' \
	"$TMP/rows.json" > "$TMP/rows.new" && mv "$TMP/rows.new" "$JSON"
