#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make bench, section 8: what record -e wakeup costs, to decide whether it
# belongs in the default set. perf bench sched pipe (every switch has a
# wakeup) alone (A), under stkrec record -a with the default kinds (B) and
# with wakeup added (W), the order rotated each round, medians: ops/s, the
# BPF programs' ns per call (bpf_stats, read from the recorder's own
# program ids before it stops), capture bytes per event, the recorder's CPU
# per 1M events.
#
# Run by run.sh (STKREC, BENCH_TMP, BENCH_TABLE, BENCH_WAKEUP_JSON), or
# alone as root from the checkout: tests/bench/wakeup.sh writes
# build/bench/wakeup.txt and wakeup.json. Environment: STKREC, BENCH_OUT
# (build/bench), BENCH_WAKEUP_ROUNDS (5), BENCH_WAKEUP_LOOPS (100000).
set -euo pipefail

STKREC=$(realpath "${STKREC:-build/stkrec}")
OUT=$(realpath -m "${BENCH_OUT:-build/bench}") # absolute: sections cd
ROUNDS=${BENCH_WAKEUP_ROUNDS:-5}
LOOPS=${BENCH_WAKEUP_LOOPS:-100000}
. "$(dirname "$0")/lib.sh"
section wakeup "BPF, bpf_stats"
for t in perf jq bpftool /usr/bin/time; do
	command -v "$t" >/dev/null || die "$t missing (make bench installs it)"
done
# ns per call of the recorder PID's program NAME, 0 before it ran
prog_ns() { prog_stats "$1" "$2" | awk '{print ($2 > 0) ? int($1 / $2) : 0}'; }

# record TAG EVENTS: one pipe run under stkrec record -a -e EVENTS; appends
# "ops switch_ns waking_ns events wakeups bytes cpu_s" to $TMP/TAG
record_round() {
	local tag=$1 ev=$2 rp o sw wk
	/usr/bin/time -f '%U %S' -o "$TMP/$tag.time" "$STKREC" record -a -e "$ev" \
		-o "$TMP/$tag.cap" >/dev/null 2>"$TMP/$tag.err" &
	local tp=$!
	wait_attached "$tp" "$TMP/$tag.err" ||
		die "stkrec record -e $ev did not attach: $(tail -3 "$TMP/$tag.err")"
	rp=$(pgrep -P "$tp") || die "stkrec record -e $ev: no recorder under time"
	# 1 s of warm-up: the first drains (what the ring buffer held at the
	# attach) are not the load's cost
	sleep 1
	o=$(perf bench sched pipe -l "$LOOPS" 2>&1 | ops)
	sw=$(prog_ns "$rp" stkrec_switch)
	wk=$(prog_ns "$rp" stkrec_waking)
	kill -INT "$rp"
	wait "$tp" || die "stkrec record -e $ev failed: $(tail -3 "$TMP/$tag.err")"
	"$STKREC" info --json "$TMP/$tag.cap" > "$TMP/$tag.json"
	read -r u s < "$TMP/$tag.time"
	echo "$o $sw $wk $(jq '.events.offcpu + .events.cpu + .events.bio + .events.wakeup' \
		"$TMP/$tag.json") $(jq '.events.wakeup' "$TMP/$tag.json") $(stat -c %s \
		"$TMP/$tag.cap") $(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}')" >> "$TMP/$tag"
}

STATS=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -q -w kernel.bpf_stats_enabled=1
: > "$TMP/a"; : > "$TMP/b"; : > "$TMP/w"
for i in $(seq "$ROUNDS"); do
	for x in $(echo "a b w a b" | cut -d' ' -f$(( (i - 1) % 3 + 1 ))-$(( (i - 1) % 3 + 3 ))); do
		case $x in
		a) perf bench sched pipe -l "$LOOPS" 2>&1 | ops >> "$TMP/a" ;;
		b) record_round b offcpu,cpu,bio ;;
		w) record_round w offcpu,cpu,bio,wakeup ;;
		esac
	done
	echo "  round $i: A $(tail -1 "$TMP/a")  B $(tail -1 "$TMP/b" | cut -d' ' -f1)  W $(tail -1 "$TMP/w" | cut -d' ' -f1) ops/s"
done
sysctl -q -w kernel.bpf_stats_enabled="$STATS"

col() { awk -v c="$2" '{print $c}' "$TMP/$1" | median; }
per() { awk -v a="$2" -v b="$3" '{printf "%.3f\n", $b ? $a / $b : 0}' "$TMP/$1" | median; }
A=$(median < "$TMP/a")
for t in b w; do
	declare "OPS_$t=$(col $t 1)" "SW_$t=$(col $t 2)" "EV_$t=$(col $t 4)"
	declare "BPE_$t=$(per $t 6 4)" "CPU_$t=$(awk '{printf "%.3f\n", $4 ? $7 * 1e6 / $4 : 0}' "$TMP/$t" | median)"
done
WK=$(col w 3); NW=$(col w 5)
LB=$(awk -v a="$A" -v b="$OPS_b" 'BEGIN {printf "%+.1f", a ? 100 * (b - a) / a : 0}')
LW=$(awk -v a="$A" -v b="$OPS_w" 'BEGIN {printf "%+.1f", a ? 100 * (b - a) / a : 0}')
row "A alone" "$A ops/s"
row "B record -a (offcpu,cpu,bio)" "$OPS_b ops/s ($LB%), $EV_b events, $BPE_b B/event, $CPU_b CPU s per 1M events, sched_switch $SW_b ns/call"
row "W record -a (+wakeup)" "$OPS_w ops/s ($LW%), $EV_w events of which $NW wakeups, $BPE_w B/event, $CPU_w CPU s per 1M events, sched_switch $SW_w ns/call, sched_waking $WK ns/call"
EXTRA=$(awk -v b="$LB" -v w="$LW" 'BEGIN {printf "%.1f", b - w}')
row "wakeup's extra cost" "$EXTRA points of pipe throughput; in the default set only if <= 2 points"
row "target: sched_waking <= 2,000 ns per call (issue 30)" "$WK ns: $(verdict "$WK" "<=" 2000)"
cat > "$JSON" <<EOF
{"alone_ops": $A, "default_ops": $OPS_b, "wakeup_ops": $OPS_w, "default_loss_pct": $LB,
 "wakeup_loss_pct": $LW, "extra_points": $EXTRA, "waking_ns_per_call": $WK,
 "switch_ns_default": $SW_b, "switch_ns_wakeup": $SW_w, "bytes_per_event_default": $BPE_b,
 "bytes_per_event_wakeup": $BPE_w, "cpu_s_per_1m_default": $CPU_b, "cpu_s_per_1m_wakeup": $CPU_w}
EOF
