#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make bench: stkrec against perf, side by side in one run so the machine's
# noise cancels. Prints a table and writes build/bench/results.json.
#
# Environment: STKREC (binary), BENCH_ROUNDS (alternations, default 5),
# BENCH_LOOPS (perf bench sched pipe -l, default 200000),
# BENCH_BIG_SECONDS (recording length for the >= 1M-event capture, default 15).
set -euo pipefail

STKREC=${STKREC:-build/stkrec}
ROUNDS=${BENCH_ROUNDS:-5}
LOOPS=${BENCH_LOOPS:-200000}
BIG_SECONDS=${BENCH_BIG_SECONDS:-15}
OUT=${BENCH_OUT:-build/bench}
mkdir -p "$OUT"
RES="$OUT/results.json"
TMP=$(mktemp -d /var/tmp/stkrec-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

median() { sort -n | awk '{a[NR]=$1} END {if (NR==0) {print 0} else if (NR%2) {print a[(NR+1)/2]} else {printf "%.1f\n", (a[NR/2]+a[NR/2+1])/2}}'; }
ops() { awk '/ops\/sec/ {print $1}'; }
json_num() { sed -n "s/.*\"$2\": *{[^}]*\"$3\": *\([0-9]*\).*/\1/p" "$1" | head -1; }
json_top() { sed -n "s/.*\"$2\": *\([0-9.]*\).*/\1/p" "$1" | head -1; }

pipe_alone() { perf bench sched pipe -l "$LOOPS" 2>&1 | ops; }
pipe_stkrec() {
	"$STKREC" record -a -o "$TMP/pipe.cap" -- perf bench sched pipe -l "$LOOPS" 2>"$TMP/rec.err" | ops
}
pipe_perf() {
	perf record -q -e sched:sched_switch -g -a -o "$TMP/perf.data" -- \
		perf bench sched pipe -l "$LOOPS" 2>/dev/null | ops
}

echo "== 1. recording overhead: perf bench sched pipe -l $LOOPS, $ROUNDS alternations (A B C ...)"
: > "$TMP/a"; : > "$TMP/b"; : > "$TMP/c"
for i in $(seq "$ROUNDS"); do
	pipe_alone >> "$TMP/a"
	pipe_stkrec >> "$TMP/b"
	pipe_perf >> "$TMP/c"
done
A=$(median < "$TMP/a"); B=$(median < "$TMP/b"); C=$(median < "$TMP/c")
loss() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", (a > 0) ? 100 * (a - b) / a : 0}'; }
LB=$(loss "$A" "$B"); LC=$(loss "$A" "$C")
printf '%-34s %12s ops/s\n' "alone" "$A"
printf '%-34s %12s ops/s  (-%s%%)\n' "under stkrec record (all kinds)" "$B" "$LB"
printf '%-34s %12s ops/s  (-%s%%)\n' "under perf record sched_switch -g" "$C" "$LC"

echo "== 2. capture size (last round's pipe captures)"
"$STKREC" info --json "$TMP/pipe.cap" > "$TMP/pipe.json"
EV=$(json_num "$TMP/pipe.json" events offcpu)
CB=$(stat -c %s "$TMP/pipe.cap")
BPE=$(awk -v b="$CB" -v e="$EV" 'BEGIN {printf "%.2f", e ? b / e : 0}')
PN=$(perf script -i "$TMP/perf.data" -F time 2>/dev/null | wc -l)
PB=$(stat -c %s "$TMP/perf.data")
zstd -q -3 -f "$TMP/perf.data" -o "$TMP/perf.data.zst"
PZ=$(stat -c %s "$TMP/perf.data.zst")
PBPE=$(awk -v b="$PB" -v e="$PN" 'BEGIN {printf "%.1f", e ? b / e : 0}')
PZPE=$(awk -v b="$PZ" -v e="$PN" 'BEGIN {printf "%.2f", e ? b / e : 0}')
printf '%-34s %12s events %10s bytes %8s B/event\n' "stkrec capture" "$EV" "$CB" "$BPE"
printf '%-34s %12s events %10s bytes %8s B/event (zstd -3: %s)\n' "perf.data" "$PN" "$PB" "$PBPE" "$PZPE"

echo "== 3. CPU-bound: stress-ng --cpu 2 under -F 999 sampling"
sng() { awk '/cpu / && $0 ~ /[0-9]/ {v=$(NF-1)} END {print v+0}'; }
S0=$(stress-ng --cpu 2 --timeout 5 --metrics-brief 2>&1 | sng)
S1=$("$STKREC" record -a -F 999 -o "$TMP/cpu.cap" -- stress-ng --cpu 2 --timeout 5 --metrics-brief 2>&1 | sng)
printf '%-34s %12s bogo ops/s\n%-34s %12s bogo ops/s (-%s%%)\n' "stress-ng alone" "$S0" \
	"under stkrec -F 999" "$S1" "$(loss "$S0" "$S1")"

echo "== 4. a big capture: ${BIG_SECONDS}s of the pipe benchmark; recorder cost"
/usr/bin/time -f '%U %S %M' -o "$TMP/time" "$STKREC" record -a -d "$BIG_SECONDS" -o "$TMP/big.cap" \
	2>/dev/null &
REC=$!
sleep 1
timeout "$((BIG_SECONDS - 1))" perf bench sched pipe -l 100000000 >/dev/null 2>&1 || true
wait "$REC" || true
read -r UT ST RSS < "$TMP/time"
"$STKREC" info --json "$TMP/big.cap" > "$TMP/big.json"
BEV=$(( $(json_num "$TMP/big.json" events offcpu) + $(json_num "$TMP/big.json" events cpu) + $(json_num "$TMP/big.json" events bio) ))
BLOST=$(( $(json_num "$TMP/big.json" lost offcpu) + $(json_num "$TMP/big.json" lost cpu) + $(json_num "$TMP/big.json" lost bio) ))
CPUM=$(awk -v u="$UT" -v s="$ST" -v e="$BEV" 'BEGIN {printf "%.2f", e ? (u + s) * 1e6 / e : 0}')
printf '%-34s %12s events, lost %s, recorder CPU %s s per 1M events, peak RSS %s KiB\n' \
	"big capture" "$BEV" "$BLOST" "$CPUM" "$RSS"

echo "== 5. report speed on the big capture against perf report on perf.data"
perf record -q -e sched:sched_switch -g -a -o "$TMP/big.data" -- sleep "$BIG_SECONDS" >/dev/null 2>&1 &
PREC=$!
sleep 1
timeout "$((BIG_SECONDS - 1))" perf bench sched pipe -l 100000000 >/dev/null 2>&1 || true
wait "$PREC" || true
PBN=$(perf script -i "$TMP/big.data" -F time 2>/dev/null | wc -l)
t() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s.%N); awk -v s="$s" -v e="$e" 'BEGIN {printf "%.3f", e - s}'; }
TR=$(t "$STKREC" report -i "$TMP/big.cap")
TF=$(t "$STKREC" report -i "$TMP/big.cap" --folded)
TP=$(t perf report -i "$TMP/big.data" --stdio)
rate() { awk -v n="$1" -v t="$2" 'BEGIN {printf "%.0f", t > 0 ? n / t : 0}'; }
RR=$(rate "$BEV" "$TR"); RF=$(rate "$BEV" "$TF"); RP=$(rate "$PBN" "$TP")
printf '%-34s %8s s %12s events/s\n' "stkrec report" "$TR" "$RR"
printf '%-34s %8s s %12s events/s\n' "stkrec report --folded" "$TF" "$RF"
printf '%-34s %8s s %12s events/s (%s events)\n' "perf report --stdio" "$TP" "$RP" "$PBN"
printf 'report speed ratio: %sx (perf-style), %sx (folded)\n' \
	"$(awk -v a="$RR" -v b="$RP" 'BEGIN {printf "%.1f", b ? a / b : 0}')" \
	"$(awk -v a="$RF" -v b="$RP" 'BEGIN {printf "%.1f", b ? a / b : 0}')"

cat > "$RES" <<JSON
{
  "machine": {"kernel": "$(uname -r)", "cpus": $(nproc), "model": "$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"},
  "pipe_ops": {"alone": $A, "stkrec": $B, "perf": $C, "stkrec_loss_pct": $LB, "perf_loss_pct": $LC},
  "capture": {"stkrec_events": $EV, "stkrec_bytes": $CB, "stkrec_bytes_per_event": $BPE,
              "perf_events": $PN, "perf_bytes_per_event": $PBPE, "perf_zstd3_bytes_per_event": $PZPE},
  "cpu_bound": {"alone": $S0, "stkrec_f999": $S1},
  "recorder": {"events": $BEV, "lost": $BLOST, "cpu_s_per_1m_events": $CPUM, "peak_rss_kib": $RSS},
  "report": {"stkrec_events_per_s": $RR, "stkrec_folded_events_per_s": $RF, "perf_events_per_s": $RP}
}
JSON
echo "results: $RES"
