#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make bench: stkrec against perf, side by side in one run so the machine's
# noise cancels. Prints a table and writes build/bench/results.json.
#
# Layout: with 2+ CPUs the workload runs on CPU 0 and the recorder (stkrec or
# perf) on CPU 1, so the figures show the cost of the in-kernel probes on the
# traced CPU, not the recorder competing for it; the recorder's own CPU time
# is measured apart (section 4). Sections 1u and 2u repeat the pipe benchmark
# unpinned, the layout the reference figures were taken in. BENCH_PIN=0 lets
# the scheduler place everything (and skips the pinned runs).
#
# Environment: STKREC (binary), BENCH_ROUNDS (alternations, default 5),
# BENCH_LOOPS (perf bench sched pipe -l pinned, default 200000), BENCH_ULOOPS
# (unpinned, default 100000), BENCH_BIG_SECONDS (recording length for the
# >= 1M-event capture, default 12), BENCH_OUT (default build/bench),
# BENCH_PIN (default 1).
set -euo pipefail

STKREC=$(realpath "${STKREC:-build/stkrec}")
ROUNDS=${BENCH_ROUNDS:-5}
LOOPS=${BENCH_LOOPS:-200000}
BIG_SECONDS=${BENCH_BIG_SECONDS:-12}
OUT=${BENCH_OUT:-build/bench}
PIN=${BENCH_PIN:-1}
mkdir -p "$OUT"
RES="$OUT/results.json"
TABLE="$OUT/results.txt"
TMP=$(mktemp -d /var/tmp/stkrec-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

die() { echo "bench: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (BPF and perf -a)"
[ -x "$STKREC" ] || die "no stkrec binary at $STKREC"
for t in perf stress-ng zstd jq bpftool vmstat taskset /usr/bin/time; do
	command -v "$t" >/dev/null || die "$t missing (make bench installs it)"
done
[ "$(nproc)" -ge 2 ] || PIN=0
if [ "$PIN" = 1 ]; then
	WL="taskset -c 0"   # workload
	RC="taskset -c 1"   # recorder
	LAYOUT="workload on CPU 0, recorder on CPU 1"
else
	WL=""
	RC=""
	LAYOUT="unpinned"
fi

median() { sort -n | awk '{a[NR]=$1} END {if (NR==0) {print 0} else if (NR%2) {print a[(NR+1)/2]} else {printf "%.1f\n", (a[NR/2]+a[NR/2+1])/2}}'; }
ops() { awk '/ops\/sec/ {v=$1} END {print v+0}'; }
div() { awk -v a="$1" -v b="$2" -v f="${3:-%.2f}" 'BEGIN {printf f, b ? a / b : 0}'; }
# change from a to b in percent, signed
loss() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%+.1f", (a > 0) ? 100 * (b - a) / a : 0}'; }
# stkrec info --json: one object, "events" and "lost" per kind
info() { "$STKREC" info --json "$1" > "$1.json" || die "stkrec info $1 failed"; }
jget() { jq -r "$2" "$1.json"; }
nevents() { jget "$1" '.events.offcpu + .events.cpu + .events.bio'; }
nlost() { jget "$1" '.lost.offcpu + .lost.cpu + .lost.bio + .lost.sideband'; }
perf_samples() { perf report -i "$1" --stats 2>/dev/null | awk '/SAMPLE events/ {print $3; exit}'; }
perf_lost() { perf report -i "$1" --stats 2>/dev/null | awk '/LOST events/ {v=$3} END {print v+0}'; }
row() { printf '%-44s %s\n' "$1" "$2" | tee -a "$TABLE"; }
head_() { printf '\n== %s\n' "$1" | tee -a "$TABLE"; }
: > "$TABLE"

MODEL=$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)
head_ "machine: $(nproc) CPUs, ${MODEL:-unknown CPU}, kernel $(uname -r); $LAYOUT"
# -a records the whole host: another busy program skews every figure.
idle() { vmstat 1 2 | awk 'END {print $15}'; }
IDLE=$(idle)
[ "$IDLE" -ge 90 ] ||
	echo "  warning: the host was only $IDLE% idle before the start; figures include that load" |
	tee -a "$TABLE"

# --- 1. recording overhead ----------------------------------------------------
# Two layouts, each with its own alternation. Pinned (workload on CPU 0,
# recorder on CPU 1): both pipe ends on one CPU switch ~10x faster than
# across CPUs, so the figure is the probes' cost per switch at full rate.
# Unpinned: the scheduler spreads the pair over the CPUs, with idle wakeups
# between switches, the layout of the reference figures (perf record -10%,
# libbpf-tools offcputime -24%, ~22,000 ops/s alone).
pipe_alone() { $WL perf bench sched pipe -l "$L" 2>&1 | ops; }
pipe_stkrec() {
	$RC /usr/bin/time -f '%U %S %M' -o "$TMP/$T.time" \
		"$STKREC" record -a -o "$TMP/$T.cap" -- \
		$WL perf bench sched pipe -l "$L" 2>"$TMP/rec.err" | ops
}
# -B: perf's build-id pass at exit aborts at random here ("stack smashing
# detected" in util/build-id.c); skipping it only makes perf cheaper.
pipe_perf() {
	$RC perf record -B -e sched:sched_switch -g -a -o "$TMP/$T.data" -- \
		$WL perf bench sched pipe -l "$L" 2>"$TMP/perf.err" | ops
}

# overhead TAG LOOPS: ROUNDS of A B C; sets A B C LB LC BLOST CLOST
overhead() {
	T=$1 L=$2
	: > "$TMP/$T.a"; : > "$TMP/$T.b"; : > "$TMP/$T.c"; : > "$TMP/$T.bl"; : > "$TMP/$T.cl"
	for i in $(seq "$ROUNDS"); do
		pipe_alone >> "$TMP/$T.a"
		pipe_stkrec >> "$TMP/$T.b" || die "stkrec record failed: $(tail -3 "$TMP/rec.err")"
		info "$TMP/$T.cap"
		nlost "$TMP/$T.cap" >> "$TMP/$T.bl"
		pipe_perf >> "$TMP/$T.c" || die "perf record failed: $(tail -3 "$TMP/perf.err")"
		perf_lost "$TMP/$T.data" >> "$TMP/$T.cl"
		echo "  round $i: A $(tail -1 "$TMP/$T.a")  B $(tail -1 "$TMP/$T.b")  C $(tail -1 "$TMP/$T.c") ops/s"
	done
	A=$(median < "$TMP/$T.a"); B=$(median < "$TMP/$T.b"); C=$(median < "$TMP/$T.c")
	LB=$(loss "$A" "$B"); LC=$(loss "$A" "$C")
	BLOST=$(awk '{s+=$1} END {print s+0}' "$TMP/$T.bl")
	CLOST=$(awk '{s+=$1} END {print s+0}' "$TMP/$T.cl")
	row "A alone" "$A ops/s"
	row "B stkrec record -a (all kinds, u+k stacks)" "$B ops/s  $LB%  lost $BLOST events"
	row "C perf record -B -e sched_switch -g -a" "$C ops/s  $LC%  lost $CLOST events"
}

head_ "1. overhead, $LAYOUT: perf bench sched pipe -l $LOOPS, $ROUNDS rounds of A B C, medians"
overhead pin "$LOOPS"
ULOOPS=${BENCH_ULOOPS:-100000}
if [ "$PIN" = 1 ]; then
	PA=$A PB_=$B PC=$C PLB=$LB PLC=$LC PBLOST=$BLOST PCLOST=$CLOST
	head_ "1u. overhead, unpinned: perf bench sched pipe -l $ULOOPS, $ROUNDS rounds of A B C, medians"
	WL0=$WL RC0=$RC WL="" RC=""
	overhead free "$ULOOPS"
	WL=$WL0 RC=$RC0
	UA=$A UB=$B UC=$C ULB=$LB ULC=$LC UBLOST=$BLOST UCLOST=$CLOST
	A=$PA B=$PB_ C=$PC LB=$PLB LC=$PLC BLOST=$PBLOST CLOST=$PCLOST
else
	cp "$TMP/pin.cap" "$TMP/free.cap"; cp "$TMP/pin.data" "$TMP/free.data"
	UA=$A UB=$B UC=$C ULB=$LB ULC=$LC UBLOST=$BLOST UCLOST=$CLOST
fi

# --- CPU-bound ----------------------------------------------------------------
head_ "1b. CPU-bound: stress-ng --cpu 1 (int64) 5 s, 3 rounds of A B"
sng() { awk '/ cpu / && $0 ~ /[0-9]/ {v=$(NF-1)} END {print v+0}'; }
SNG="stress-ng --cpu 1 --cpu-method int64 --timeout 5 --metrics-brief"
: > "$TMP/s0"; : > "$TMP/s1"
for i in 1 2 3; do
	$WL $SNG 2>&1 | sng >> "$TMP/s0"
	$RC "$STKREC" record -a -F 999 -o "$TMP/cpu.cap" -- $WL $SNG 2>&1 | sng >> "$TMP/s1"
	echo "  round $i: A $(tail -1 "$TMP/s0")  B $(tail -1 "$TMP/s1") bogo ops/s"
done
S0=$(median < "$TMP/s0"); S1=$(median < "$TMP/s1")
info "$TMP/cpu.cap"
SCPU=$(jget "$TMP/cpu.cap" .events.cpu)
row "stress-ng alone" "$S0 bogo ops/s"
row "under stkrec record -a -F 999" "$S1 bogo ops/s  $(loss "$S0" "$S1")%  ($SCPU CPU samples)"

# --- 2. capture size ------------------------------------------------------------
# size TAG: stkrec's capture and perf.data of the last round of that layout
size() {
	local T=$1
	info "$TMP/$T.cap"
	EV=$(nevents "$TMP/$T.cap"); OEV=$(jget "$TMP/$T.cap" .events.offcpu)
	CB=$(stat -c %s "$TMP/$T.cap")
	BPE=$(div "$CB" "$EV")
	PN=$(perf_samples "$TMP/$T.data")
	PB=$(stat -c %s "$TMP/$T.data")
	zstd -q -3 -f "$TMP/$T.data" -o "$TMP/$T.data.zst"
	PZ=$(stat -c %s "$TMP/$T.data.zst")
	PBPE=$(div "$PB" "$PN" %.1f); PZPE=$(div "$PZ" "$PN")
	row "stkrec capture (zstd inside)" "$BPE B/event  ($CB bytes, $EV events, $OEV off-CPU)"
	row "perf.data raw" "$PBPE B/event  ($PB bytes, $PN events)"
	row "perf.data after zstd -3" "$PZPE B/event  ($PZ bytes)"
}
head_ "2u. capture size, unpinned (last round of 1u)"
size free
UEV=$EV UCB=$CB UBPE=$BPE UPN=$PN UPB=$PB UPBPE=$PBPE UPZPE=$PZPE
head_ "2. capture size, $LAYOUT (last round of 1: same workload, same seconds)"
size pin

# --- 4. a big capture: recorder cost --------------------------------------------
# Several pipe pairs, unpinned, for BIG_SECONDS: >= 1M events on 2 CPUs.
PAIRS=${BENCH_PAIRS:-2}
pipes_for() {
	local s=$1 i pids=()
	for i in $(seq "$PAIRS"); do
		timeout "$s" perf bench sched pipe -l 1000000000 >/dev/null 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}" || true # timeout's status 124 is the normal end
}
# run_time_ns / run_cnt of a loaded program (kernel.bpf_stats_enabled)
prog_ns() {
	bpftool prog show -j 2>/dev/null |
		jq -r --arg n "$1" '[.[] | select(.name == $n and .run_cnt > 0)] |
			if length > 0 then (.[0].run_time_ns / .[0].run_cnt | floor) else 0 end'
}
head_ "4. recorder cost: ${BIG_SECONDS} s of $PAIRS pipe pairs (unpinned)"
STATS=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -q -w kernel.bpf_stats_enabled=1
/usr/bin/time -f '%U %S %M' -o "$TMP/big.time" \
	"$STKREC" record -a -F 999 -d "$BIG_SECONDS" -o "$TMP/big.cap" 2>"$TMP/big.err" &
REC=$!
sleep 1
pipes_for "$((BIG_SECONDS - 2))"
SWNS=$(prog_ns stkrec_switch)
sysctl -q -w kernel.bpf_stats_enabled="$STATS"
wait "$REC" || die "stkrec record failed: $(cat "$TMP/big.err")"
read -r UT ST RSS < "$TMP/big.time"
info "$TMP/big.cap"
BEV=$(nevents "$TMP/big.cap"); BLOSTB=$(nlost "$TMP/big.cap")
CPUM=$(awk -v u="$UT" -v s="$ST" -v e="$BEV" 'BEGIN {printf "%.2f", e ? (u + s) * 1e6 / e : 0}')
read -r SUT SST SRSS < "$TMP/pin.time"
SEV=$(nevents "$TMP/pin.cap")
row "big capture" "$BEV events, lost $BLOSTB"
row "sched_switch program" "$SWNS ns per call (bpf_stats)"
row "recorder CPU per 1M events" "$CPUM s (user $UT s + sys $ST s)"
row "recorder peak RSS" "$RSS KiB at $BEV events; $SRSS KiB at $SEV events"
[ "$BEV" -ge 1000000 ] || echo "  warning: fewer than 1M events; raise BENCH_BIG_SECONDS"

# --- 3. report speed --------------------------------------------------------------
head_ "3. report speed on the big capture; perf report on perf.data of the same load"
perf record -B -e sched:sched_switch -g -a -o "$TMP/big.data" -- sleep "$BIG_SECONDS" \
	>/dev/null 2>"$TMP/bigperf.err" &
PREC=$!
sleep 1
pipes_for "$((BIG_SECONDS - 2))"
wait "$PREC" || die "perf record failed: $(cat "$TMP/bigperf.err")"
PBN=$(perf_samples "$TMP/big.data")
# seconds of wall time of one command; its output is discarded, failure fatal
t() {
	local s e
	s=$(date +%s.%N)
	"$@" >/dev/null 2>"$TMP/t.err" || die "$* failed: $(head -3 "$TMP/t.err")"
	e=$(date +%s.%N)
	awk -v s="$s" -v e="$e" 'BEGIN {printf "%.2f", e - s}'
}
TR=$(t "$STKREC" report -i "$TMP/big.cap")
TF=$(t "$STKREC" report -i "$TMP/big.cap" --folded)
# perf 6.1 sometimes aborts in util/build-id.c (binaries gone since the
# recording): its time is then not comparable, say so and go on.
if ! TP=$(t perf report -i "$TMP/big.data" --stdio); then
	echo "  warning: perf report failed: $(tail -1 "$TMP/t.err")" | tee -a "$TABLE"
	TP=0
fi
RR=$(div "$BEV" "$TR" %.0f); RF=$(div "$BEV" "$TF" %.0f); RP=$(div "$PBN" "$TP" %.0f)
XR=$(div "$RR" "$RP" %.1f); XF=$(div "$RF" "$RP" %.1f)
row "stkrec report" "$TR s  $RR events/s  ${XR}x perf"
row "stkrec report --folded" "$TF s  $RF events/s  ${XF}x perf"
row "perf report --stdio" "$TP s  $RP events/s  ($PBN events)"

# --- 5. event-rate ceiling ----------------------------------------------------------
# Two ladders: more pipe pairs (saturating, the probes' cost caps the rate),
# then stress-ng --switch at a set frequency (leaves CPU to the recorder
# until the rate gets too high). The ceiling is the highest recorded rate
# with nothing lost.
ceil_step() {
	local label=$1
	shift
	"$STKREC" record -a -F 999 -d 5 -o "$TMP/ceil.cap" 2>/dev/null &
	local rec=$!
	sleep 0.8
	"$@" >/dev/null 2>&1 || true
	wait "$rec" || die "stkrec record failed"
	info "$TMP/ceil.cap"
	CE=$(nevents "$TMP/ceil.cap"); CL=$(nlost "$TMP/ceil.cap")
	CR=$(div "$CE" "$(jget "$TMP/ceil.cap" .duration_s)" %.0f)
	row "  $label" "$CR events/s, lost $CL"
	jq -n -c --arg w "$label" --argjson r "$CR" --argjson l "$CL" \
		'{workload: $w, events_per_s: $r, lost: $l}' >> "$TMP/ceil"
	if [ "$CL" = 0 ] && [ "$CR" -gt "$CEIL" ]; then CEIL=$CR; CEILW=$label; fi
}
head_ "5. event-rate ceiling: 4 s of each load under stkrec record -a"
CEIL=0; CEILW=none
: > "$TMP/ceil"
for PAIRS in 1 2 4 8; do
	ceil_step "$PAIRS pipe pairs" pipes_for 4
done
for f in 25000 50000 100000 200000 400000; do
	ceil_step "stress-ng --switch 1 --switch-freq $f" \
		stress-ng --switch 1 --switch-freq "$f" --timeout 4
done
row "highest rate with no loss" "$CEIL events/s ($CEILW)"

jq -n \
	--arg kernel "$(uname -r)" --arg model "$MODEL" --argjson cpus "$(nproc)" \
	--arg layout "$LAYOUT" --argjson loops "$LOOPS" --argjson rounds "$ROUNDS" \
	--argjson a "$A" --argjson b "$B" --argjson c "$C" \
	--argjson lb "$LB" --argjson lc "$LC" --argjson blost "$BLOST" --argjson clost "$CLOST" \
	--argjson s0 "$S0" --argjson s1 "$S1" --argjson scpu "$SCPU" \
	--argjson ev "$EV" --argjson cb "$CB" --argjson bpe "$BPE" \
	--argjson pn "$PN" --argjson pb "$PB" --argjson pbpe "$PBPE" --argjson pzpe "$PZPE" \
	--argjson bev "$BEV" --argjson blostb "$BLOSTB" --argjson cpum "$CPUM" \
	--argjson rss "$RSS" --argjson srss "$SRSS" --argjson sev "$SEV" --argjson swns "$SWNS" \
	--argjson rr "$RR" --argjson rf "$RF" --argjson rp "$RP" --argjson pbn "$PBN" \
	--argjson tr "$TR" --argjson tf "$TF" --argjson tp "$TP" \
	--argjson ceil "$CEIL" --arg ceilw "$CEILW" --slurpfile steps "$TMP/ceil" \
	--argjson uloops "$ULOOPS" --argjson ua "$UA" --argjson ub "$UB" --argjson uc "$UC" \
	--argjson ulb "$ULB" --argjson ulc "$ULC" --argjson ublost "$UBLOST" --argjson uclost "$UCLOST" \
	--argjson uev "$UEV" --argjson ucb "$UCB" --argjson ubpe "$UBPE" --argjson upn "$UPN" \
	--argjson upb "$UPB" --argjson upbpe "$UPBPE" --argjson upzpe "$UPZPE" '{
	machine: {kernel: $kernel, cpus: $cpus, model: $model, layout: $layout},
	pipe_ops_unpinned: {loops: $uloops, rounds: $rounds, alone: $ua, stkrec: $ub, perf: $uc,
		   stkrec_change_pct: $ulb, perf_change_pct: $ulc,
		   stkrec_lost_events: $ublost, perf_lost_events: $uclost},
	capture_unpinned: {stkrec_events: $uev, stkrec_bytes: $ucb, stkrec_bytes_per_event: $ubpe,
		  perf_events: $upn, perf_bytes: $upb, perf_bytes_per_event: $upbpe,
		  perf_zstd3_bytes_per_event: $upzpe},
	pipe_ops: {loops: $loops, rounds: $rounds, alone: $a, stkrec: $b, perf: $c,
		   stkrec_change_pct: $lb, perf_change_pct: $lc,
		   stkrec_lost_events: $blost, perf_lost_events: $clost},
	cpu_bound: {alone: $s0, stkrec_f999: $s1, samples: $scpu},
	capture: {stkrec_events: $ev, stkrec_bytes: $cb, stkrec_bytes_per_event: $bpe,
		  perf_events: $pn, perf_bytes: $pb, perf_bytes_per_event: $pbpe,
		  perf_zstd3_bytes_per_event: $pzpe},
	recorder: {events: $bev, lost: $blostb, cpu_s_per_1m_events: $cpum,
		   peak_rss_kib: $rss, small_events: $sev, small_peak_rss_kib: $srss,
		   switch_prog_ns_per_call: $swns},
	report: {stkrec_s: $tr, stkrec_folded_s: $tf, perf_s: $tp, perf_events: $pbn,
		 stkrec_events_per_s: $rr, stkrec_folded_events_per_s: $rf,
		 perf_events_per_s: $rp},
	ceiling: {events_per_s_no_loss: $ceil, workload: $ceilw, steps: $steps}
}' > "$RES"
echo "results: $RES, table: $TABLE"
