#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make bench, section 6: user stacks unwound in the kernel from .eh_frame
# (record --call-graph dwarf) against the frame-pointer walk (--call-graph
# fp) and perf record --call-graph dwarf, on the same loads in one run. Each
# figure is printed with its target and PASS or MISS.
#
# 6a completeness: % of CPU samples whose stack reaches the frame that
#    only a whole walk reaches: start_thread -> t_* for the threads of
#    nofp_threads (built without frame pointers), __libc_start_call_main for
#    Debian's xz, sort and python3.11. perf: perf script of its dwarf
#    recording, counted the same way, printed beside it. Target: dwarf >=
#    95% (issue 14). The stacks of misses are kept in
#    OUT/unwind-WORKLOAD.misses (stkrec dwarf) and .perf-misses (folded,
#    most samples first).
# 6b cost on one mixed load (nofp_threads + perf bench sched pipe, record
#    -a -F 999, rounds of fp and dwarf alternated): ns per call of the
#    sched_switch and CPU-sample programs (bpf_stats, read from the
#    recorder's own program ids just before it stops), the recorder's user
#    CPU per 1M events, capture bytes per event.
# 6c throughput: stress-ng --cpu 2 matrixprod alone, under record -a -F 999
#    in fp and in dwarf mode, the order rotated each round, medians.
# 6d capture bytes per CPU sample of the dwarf recordings of 6a: stkrec's
#    capture (zstd inside) against perf.data after zstd -3, as section 2
#    does (raw perf.data printed beside it).
# 6e report time of those same recordings, like with like as section 3
#    does: the flat self table (stkrec report; perf report --stdio
#    --no-children -g none) and the call graph (stkrec report -g; perf
#    report --stdio --no-children, which unwinds the stack copies).
#
# Run by run.sh (which passes STKREC, BENCH_TMP, BENCH_TABLE and
# BENCH_UNWIND_JSON), or alone as root from the checkout:
# tests/bench/unwind.sh writes build/bench/unwind.txt and unwind.json.
# Environment: STKREC, STKREC_WORKLOADS (default build/workloads),
# BENCH_OUT (default build/bench), BENCH_UNWIND_ROUNDS (6b and 6c, default
# 3), BENCH_UNWIND_SECONDS (6b load, default 6), BENCH_XZ_MB (default 50),
# BENCH_REPORT_RUNS (default 3), BENCH_PYTHON (default /usr/bin/python3.11).
set -euo pipefail

STKREC=$(realpath "${STKREC:-build/stkrec}")
WORKLOADS=${STKREC_WORKLOADS:-build/workloads}
OUT=$(realpath -m "${BENCH_OUT:-build/bench}") # absolute: sections cd
ROUNDS=${BENCH_UNWIND_ROUNDS:-3}
COST_S=${BENCH_UNWIND_SECONDS:-6}
XZ_MB=${BENCH_XZ_MB:-50}
REPORT_RUNS=${BENCH_REPORT_RUNS:-3}
PY=${BENCH_PYTHON:-/usr/bin/python3.11}
FREQ=999
# shellcheck source=tests/bench/lib.sh
. "$(dirname "$0")/lib.sh"
section unwind "BPF, bpf_stats and perf"
for t in perf stress-ng jq bpftool xz sort "$PY" timeout /usr/bin/time; do
	command -v "$t" >/dev/null || die "$t missing"
done
# make bench builds stkrec only: the workload is built here when missing.
[ -x "$WORKLOADS/nofp_threads" ] || [ ! -f Makefile ] ||
	make --no-print-directory "$WORKLOADS/nofp_threads" >&2 || true
[ -x "$WORKLOADS/nofp_threads" ] || die "no $WORKLOADS/nofp_threads (make workloads)"
# A copy: a rebuild during the run must not change the binary the
# recordings name.
cp "$WORKLOADS/nofp_threads" "$TMP/nofp_threads"

# fragments of the JSON written at the end, one object a line
jfrag() { jq -n -c "$@" >> "$TMP/json.$SECTION"; }

[ -n "${BENCH_TABLE:-}" ] || idle_warning

# --- 6a. completeness -----------------------------------------------------------
# Inputs made here, the same each run: xz's is log-like lines (timestamps,
# counters, random hex ids; ~1/4 of its size after xz -3), sort's random
# base64 lines.
awk -v n=$((XZ_MB * 9200)) 'BEGIN {
	srand(1); split("GET POST PUT DELETE HEAD", m, " ")
	split("200 200 200 200 304 404 500 301", st, " ")
	for (i = 0; i < n; i++)
		printf "2026-11-25T%02d:%02d:%02d.%06d host%02d %s /api/v%d/items/%x?page=%d status=%s bytes=%d id=%08x%08x\n",
			(i / 3600000) % 24, (i / 60000) % 60, (i / 1000) % 60, int(rand() * 1e6),
			int(rand() * 40), m[1 + int(rand() * 5)], 1 + int(rand() * 3),
			int(rand() * 65536), int(rand() * 100), st[1 + int(rand() * 8)],
			int(rand() * 100000), int(rand() * 4294967296), int(rand() * 4294967296)
}' > "$TMP/big.txt"
head -c 30M /dev/urandom | base64 -w 24 > "$TMP/sort.txt"
BIGMB=$(( $(stat -c %s "$TMP/big.txt") >> 20 ))
SORTMB=$(( $(stat -c %s "$TMP/sort.txt") >> 20 ))
PYLOOP=60000000

# Each workload: name, comm regex (the samples counted), frame regex over
# the folded stack "comm;outer;...;inner" (what a whole walk reaches),
# command. nofp_threads: its four threads (the main thread only waits).
WLS="nofp_threads xz sort python"
declare -A W_COMM W_PATH W_LABEL
W_COMM[nofp_threads]='^nofp-'
W_PATH[nofp_threads]=';start_thread;(.*;)?t_(burn|nap|hold|lock)(;|$)'
W_LABEL[nofp_threads]="nofp_threads 3000 (start_thread;t_*)"
LIBC_MAIN=';__libc_start_call_main(;|$)'
W_COMM[xz]='^xz$'
W_PATH[xz]=$LIBC_MAIN
W_LABEL[xz]="xz -T1 -3 -c (${BIGMB} MB)"
# --parallel=1: sort's worker threads start at start_thread, never in main
W_COMM[sort]='^sort$'
W_PATH[sort]=$LIBC_MAIN
W_LABEL[sort]="sort --parallel=1 (${SORTMB} MB)"
W_COMM[python]='^python3'
W_PATH[python]=$LIBC_MAIN
W_LABEL[python]="$(basename "$PY") -c 'for i in range(${PYLOOP})'"

# set_cmd W: the workload's command line into CMD
set_cmd() {
	case $1 in
	nofp_threads) CMD=("$TMP/nofp_threads" 3000) ;;
	xz) CMD=(xz -T1 -3 -c "$TMP/big.txt") ;;
	sort) CMD=(sort --parallel=1 -o /dev/null "$TMP/sort.txt") ;;
	python) CMD=("$PY" -c "$(printf 'x=0\nfor i in range(%d): x+=i' "$PYLOOP")") ;;
	esac
}
# the workloads' output (xz -c) goes to /dev/null
# the seconds each recording took: $TMP/W.MODE.s
now() { date +%s.%N; }
since() { awk -v s="$1" -v e="$(now)" 'BEGIN {printf "%.1f", e - s}'; }
rec_stkrec() {
	local s
	set_cmd "$1"
	s=$(now)
	"$STKREC" record -e cpu -F "$FREQ" --call-graph "$2" -o "$TMP/$1.$2.cap" -- "${CMD[@]}" \
		>/dev/null 2>"$TMP/$1.$2.err" ||
		die "stkrec record --call-graph $2 ($1) failed: $(tail -3 "$TMP/$1.$2.err")"
	since "$s" > "$TMP/$1.$2.s"
}
# perf -B: its build-id pass at exit aborts at random here (see run.sh)
rec_perf() {
	local s
	set_cmd "$1"
	s=$(now)
	perf record -B -q -e cpu-clock -F "$FREQ" --call-graph dwarf -o "$TMP/$1.perf.data" -- \
		"${CMD[@]}" >/dev/null 2>"$TMP/$1.perf.err" ||
		die "perf record --call-graph dwarf ($1) failed: $(tail -3 "$TMP/$1.perf.err")"
	since "$s" > "$TMP/$1.perf.s"
}
# perf script -F comm,ip,sym prints a "comm" line, the callchain innermost
# first, a blank line: folded like stkrec's, one line a sample.
perf_folded() {
	perf script -i "$1" -F comm,ip,sym 2>/dev/null | awk '
	function flush(  i, s) {
		if (comm == "")
			return
		s = comm
		for (i = n; i >= 1; i--)
			s = s ";" fr[i]
		print s, 1
		comm = ""
		n = 0
	}
	/^[^ \t]/ { flush(); comm = $1; next }
	/^[ \t]+[0-9a-f]+ / { s = $0; sub(/^[ \t]+[0-9a-f]+ /, "", s); fr[++n] = s; next }
	/^$/ { flush() }
	END { flush() }'
}
# count FOLDED COMM_RE PATH_RE: "matching total" samples of those comms
count() {
	awk -v c="$2" -v p="$3" '{
		n = $NF; s = substr($0, 1, length($0) - length($NF) - 1)
		split(s, f, ";")
		if (f[1] !~ c)
			next
		t += n
		if (s ~ p)
			m += n
	} END {print m + 0, t + 0}' "$1"
}
# misses FOLDED COMM_RE PATH_RE: the stacks that do not match, summed,
# most samples first
misses() {
	awk -v c="$2" -v p="$3" '{
		s = substr($0, 1, length($0) - length($NF) - 1)
		split(s, f, ";")
		if (f[1] ~ c && s !~ p)
			a[s] += $NF
	} END {for (s in a) print a[s] "\t" s}' "$1" | sort -n -r | awk -F'\t' '{print $2, $1}'
}
# where the misses end: the outermost two frames of each missing stack
# (the frame the walk stopped at and its callee), summed, top 4
miss_ends() {
	awk '{
		n = $NF; s = substr($0, 1, length($0) - length($NF) - 1)
		k = split(s, f, ";")
		e = (k >= 3) ? f[2] ";" f[3] : (k == 2 ? f[2] : "(no frame)")
		a[e] += n
	} END {for (e in a) print a[e] "\t" e}' "$1" | sort -n -r | head -4 |
		awk -F'\t' '{printf "%s%s (%d)", (NR > 1 ? ", " : ""), $2, $1}'
}
pct() { awk -v m="$1" -v t="$2" 'BEGIN {printf "%.1f", (t > 0) ? 100 * m / t : 0}'; }

SECTION=complete
: > "$TMP/json.$SECTION"
head_ "6a. completeness: % of CPU samples whose user stack is whole: nofp_threads' threads through start_thread to t_*, the others to __libc_start_call_main (-F $FREQ, one recording each)"
for w in $WLS; do
	rec_stkrec "$w" dwarf
	rec_stkrec "$w" fp
	rec_perf "$w"
	for m in dwarf fp; do
		info "$TMP/$w.$m.cap"
		"$STKREC" report -i "$TMP/$w.$m.cap" --folded -e cpu > "$TMP/$w.$m.folded" ||
			die "stkrec report --folded ($w, $m) failed"
	done
	perf_folded "$TMP/$w.perf.data" > "$TMP/$w.perf.folded"
	read -r DM DT < <(count "$TMP/$w.dwarf.folded" "${W_COMM[$w]}" "${W_PATH[$w]}")
	read -r FM FT < <(count "$TMP/$w.fp.folded" "${W_COMM[$w]}" "${W_PATH[$w]}")
	read -r PM PT < <(count "$TMP/$w.perf.folded" "${W_COMM[$w]}" "${W_PATH[$w]}")
	DP=$(pct "$DM" "$DT"); FP=$(pct "$FM" "$FT"); PP=$(pct "$PM" "$PT")
	TRUNC=$(jget "$TMP/$w.dwarf.cap" .unwind_truncated.cpu)
	NOTAB=$(jget "$TMP/$w.dwarf.cap" .unwind_no_tables.cpu)
	misses "$TMP/$w.dwarf.folded" "${W_COMM[$w]}" "${W_PATH[$w]}" > "$OUT/unwind-$w.misses"
	misses "$TMP/$w.perf.folded" "${W_COMM[$w]}" "${W_PATH[$w]}" > "$OUT/unwind-$w.perf-misses"
	V=$(verdict "$DP" ">=" 95)
	row "${W_LABEL[$w]}" "dwarf $DP% ($DM/$DT)  fp $FP% ($FM/$FT)  perf dwarf $PP% ($PM/$PT)  target dwarf >= 95%: $V"
	note "  wall s: dwarf $(cat "$TMP/$w.dwarf.s"), fp $(cat "$TMP/$w.fp.s"), perf $(cat "$TMP/$w.perf.s")"
	note "  dwarf: $((DT - DM)) missed: $TRUNC stacks truncated, $NOTAB walked by frame pointer (no tables yet); they end at: $(miss_ends "$OUT/unwind-$w.misses")"
	jfrag --arg w "$w" --arg what "${W_LABEL[$w]}" \
		--argjson dm "$DM" --argjson dt "$DT" --argjson dp "$DP" \
		--argjson fm "$FM" --argjson ft "$FT" --argjson fp "$FP" \
		--argjson pm "$PM" --argjson pt "$PT" --argjson pp "$PP" \
		--argjson trunc "$TRUNC" --argjson notab "$NOTAB" --arg v "$V" \
		'{($w): {what: $what, dwarf: {whole: $dm, samples: $dt, pct: $dp,
			truncated: $trunc, no_tables: $notab},
			fp: {whole: $fm, samples: $ft, pct: $fp},
			perf_dwarf: {whole: $pm, samples: $pt, pct: $pp}, verdict: $v}}'
done
note "(misses' stacks, folded: $OUT/unwind-*.misses (stkrec dwarf), unwind-*.perf-misses)"

# --- 6b. cost on one load: BPF programs, recorder CPU, bytes ----------------------
# The load: nofp_threads (two threads burning CPU without frame pointers,
# two sleeping and locking) and perf bench sched pipe (context switches at
# full rate), COST_S seconds, unpinned, recorded with -a -F 999.
utime() { awk '{print $14 + 0}' "/proc/$1/stat" 2>/dev/null || echo 0; }
mix_load() {
	"$TMP/nofp_threads" $((COST_S * 1000)) 50 &
	local n=$!
	timeout "$COST_S" perf bench sched pipe -l 1000000000 >/dev/null 2>&1 || true
	wait "$n"
}
# cost_round MODE I: one recording of the load; appends to $TMP/cost.MODE
# "switch_ns cpu_ns user_s sys_s events bytes lost load_user_s"
cost_round() {
	local m=$1 t=$TMP/cost.$1.$2 tp rp sw cpu u0 u1
	/usr/bin/time -f '%U %S' -o "$t.time" "$STKREC" record -a -F "$FREQ" \
		--call-graph "$m" -o "$t.cap" >/dev/null 2>"$t.err" &
	tp=$!
	wait_attached "$tp" "$t.err" ||
		die "stkrec record ($m) did not attach: $(tail -3 "$t.err")"
	rp=$(pgrep -P "$tp") || die "stkrec record ($m): no recorder under time"
	# 1 s of warm-up: the first drains (what the ring buffer held at the
	# attach) are not the load's cost
	sleep 1
	u0=$(utime "$rp")
	mix_load
	# read just before the recorder stops
	sw=$(prog_stats "$rp" stkrec_switch); cpu=$(prog_stats "$rp" stkrec_cpu)
	u1=$(utime "$rp")
	kill -INT "$rp"
	wait "$tp" || die "stkrec record ($m) failed: $(tail -3 "$t.err")"
	info "$t.cap"
	read -r UT ST < "$t.time"
	echo "$(echo "$sw" | awk '{printf "%.0f", $2 ? $1 / $2 : 0}')" \
		"$(echo "$cpu" | awk '{printf "%.0f", $2 ? $1 / $2 : 0}')" \
		"$UT $ST $(nevents "$t.cap") $(stat -c %s "$t.cap") $(nlost "$t.cap")" \
		"$(awk -v a="$u0" -v b="$u1" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", (b - a) / hz}')" \
		>> "$TMP/cost.$m"
	echo "  round $2 $m: switch $(tail -1 "$TMP/cost.$m" | cut -d' ' -f1) ns/call," \
		"cpu $(tail -1 "$TMP/cost.$m" | cut -d' ' -f2) ns/call, $(nevents "$t.cap") events"
}
col() { awk -v c="$2" '{print $c}' "$TMP/cost.$1" | median; }

SECTION=cost
: > "$TMP/json.$SECTION"
head_ "6b. cost: nofp_threads + perf bench sched pipe, ${COST_S} s, record -a -F $FREQ; $ROUNDS rounds of fp, dwarf (order alternated), medians"
STATS=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -q -w kernel.bpf_stats_enabled=1
: > "$TMP/cost.fp"; : > "$TMP/cost.dwarf"
for i in $(seq "$ROUNDS"); do
	if [ $((i % 2)) = 1 ]; then order="fp dwarf"; else order="dwarf fp"; fi
	for m in $order; do cost_round "$m" "$i"; done
done
sysctl -q -w kernel.bpf_stats_enabled="$STATS"
for m in fp dwarf; do
	declare "SW_$m=$(col "$m" 1)" "CPU_$m=$(col "$m" 2)" "EV_$m=$(col "$m" 5)"
	declare "LOST_$m=$(awk '{s += $7} END {print s + 0}' "$TMP/cost.$m")"
	declare "UPM_$m=$(awk '{printf "%.3f\n", $5 ? $3 * 1e6 / $5 : 0}' "$TMP/cost.$m" | median)"
	declare "SPM_$m=$(awk '{printf "%.3f\n", $5 ? $4 * 1e6 / $5 : 0}' "$TMP/cost.$m" | median)"
	declare "LPM_$m=$(awk '{printf "%.3f\n", $5 ? $8 * 1e6 / $5 : 0}' "$TMP/cost.$m" | median)"
	declare "BPE_$m=$(awk '{printf "%.2f\n", $5 ? $6 / $5 : 0}' "$TMP/cost.$m" | median)"
done
RSW=$(div "$SW_dwarf" "$SW_fp"); RCPU=$(div "$CPU_dwarf" "$CPU_fp")
RUPM=$(div "$UPM_dwarf" "$UPM_fp"); RLPM=$(div "$LPM_dwarf" "$LPM_fp")
RBPE=$(div "$BPE_dwarf" "$BPE_fp")
VSW=$(verdict "$RSW" "<=" 1.5); VCPU=$(verdict "$RCPU" "<=" 1.5)
VUPM=$(verdict "$RUPM" "<=" 2); VBPE=$(verdict "$RBPE" "<=" 2)
row "stkrec_switch ns per call (bpf_stats)" "dwarf $SW_dwarf  fp $SW_fp  ${RSW}x  target <= 1.5x: $VSW"
row "stkrec_cpu ns per call (bpf_stats)" "dwarf $CPU_dwarf  fp $CPU_fp  ${RCPU}x  target <= 1.5x: $VCPU"
row "recorder user CPU s per 1M events" "dwarf $UPM_dwarf  fp $UPM_fp  ${RUPM}x  target <= 2x: $VUPM"
note "  (sys s per 1M events: dwarf $SPM_dwarf, fp $SPM_fp; user s during the load only: dwarf $LPM_dwarf, fp $LPM_fp per 1M, ${RLPM}x)"
row "capture bytes per event" "dwarf $BPE_dwarf  fp $BPE_fp  ${RBPE}x  target <= 2x: $VBPE"
note "  (events per recording, medians: dwarf $EV_dwarf, fp $EV_fp; lost in all rounds: dwarf $LOST_dwarf, fp $LOST_fp)"
jfrag --argjson rounds "$ROUNDS" --argjson secs "$COST_S" \
	--argjson swd "$SW_dwarf" --argjson swf "$SW_fp" --argjson rsw "$RSW" --arg vsw "$VSW" \
	--argjson cd "$CPU_dwarf" --argjson cf "$CPU_fp" --argjson rc "$RCPU" --arg vc "$VCPU" \
	--argjson ud "$UPM_dwarf" --argjson uf "$UPM_fp" --argjson ru "$RUPM" --arg vu "$VUPM" \
	--argjson sd "$SPM_dwarf" --argjson sf "$SPM_fp" --argjson ld "$LPM_dwarf" --argjson lf "$LPM_fp" \
	--argjson bd "$BPE_dwarf" --argjson bf "$BPE_fp" --argjson rb "$RBPE" --arg vb "$VBPE" \
	--argjson ed "$EV_dwarf" --argjson ef "$EV_fp" --argjson lod "$LOST_dwarf" --argjson lof "$LOST_fp" \
	'{rounds: $rounds, seconds: $secs,
	  switch_ns_per_call: {dwarf: $swd, fp: $swf, ratio: $rsw, target: 1.5, verdict: $vsw},
	  cpu_ns_per_call: {dwarf: $cd, fp: $cf, ratio: $rc, target: 1.5, verdict: $vc},
	  recorder_user_s_per_1m_events: {dwarf: $ud, fp: $uf, ratio: $ru, target: 2, verdict: $vu},
	  recorder_sys_s_per_1m_events: {dwarf: $sd, fp: $sf},
	  recorder_user_s_per_1m_events_during_load: {dwarf: $ld, fp: $lf},
	  bytes_per_event: {dwarf: $bd, fp: $bf, ratio: $rb, target: 2, verdict: $vb},
	  events: {dwarf: $ed, fp: $ef}, lost: {dwarf: $lod, fp: $lof}}'

# --- 6c. CPU-bound throughput ------------------------------------------------------
SECTION=stress
: > "$TMP/json.$SECTION"
SNG="stress-ng --cpu 2 --cpu-method matrixprod --metrics-brief -t 10"
head_ "6c. throughput: $SNG; $ROUNDS rounds of alone, fp, dwarf (record -a -F $FREQ, order rotated), medians"
sng() { awk '/ cpu / && $0 ~ /[0-9]/ {v=$(NF-1)} END {print v+0}'; }
: > "$TMP/sng.a"; : > "$TMP/sng.fp"; : > "$TMP/sng.dwarf"
for i in $(seq "$ROUNDS"); do
	for x in $(echo "a fp dwarf a fp" | cut -d' ' -f$(( (i - 1) % 3 + 1 ))-$(( (i - 1) % 3 + 3 ))); do
		if [ "$x" = a ]; then
			$SNG 2>&1 | sng >> "$TMP/sng.a"
		else
			"$STKREC" record -a -F "$FREQ" --call-graph "$x" -o "$TMP/sng.$x.cap" -- $SNG 2>&1 |
				sng >> "$TMP/sng.$x"
		fi
	done
	echo "  round $i: alone $(tail -1 "$TMP/sng.a")  fp $(tail -1 "$TMP/sng.fp")  dwarf $(tail -1 "$TMP/sng.dwarf") bogo ops/s"
done
SA=$(median < "$TMP/sng.a"); SF=$(median < "$TMP/sng.fp"); SD=$(median < "$TMP/sng.dwarf")
# throughput loss in points of percent (positive: slower)
lossp() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", (a > 0) ? 100 * (a - b) / a : 0}'; }
LF=$(lossp "$SA" "$SF"); LD=$(lossp "$SA" "$SD")
VS=$(verdict "$LD" "<=" "$(awk -v f="$LF" 'BEGIN {print f + 3}')")
row "stress-ng alone" "$SA bogo ops/s"
row "throughput loss under record -a -F $FREQ" "dwarf $LD%  fp $LF%  ($SD, $SF bogo ops/s)  target dwarf <= fp + 3 points: $VS"
jfrag --argjson a "$SA" --argjson f "$SF" --argjson d "$SD" --argjson lf "$LF" --argjson ld "$LD" \
	--argjson rounds "$ROUNDS" --arg v "$VS" \
	'{rounds: $rounds, alone: $a, fp: $f, dwarf: $d, fp_loss_pct: $lf, dwarf_loss_pct: $ld,
	  target: "dwarf <= fp + 3 points", verdict: $v}'

# --- 6d. capture size against perf.data, 6e. report time ------------------------------
perf_samples() { perf report -i "$1" --stats 2>/dev/null | awk '/SAMPLE events/ {print $3; exit}'; }
# median seconds of wall time of one command over REPORT_RUNS runs
t() {
	local s e i
	for i in $(seq "$REPORT_RUNS"); do
		s=$(date +%s.%N)
		"$@" >/dev/null 2>"$TMP/t.err" || return 1
		e=$(date +%s.%N)
		awk -v s="$s" -v e="$e" 'BEGIN {printf "%.3f\n", e - s}'
	done | median
}
SECTION=size
: > "$TMP/json.$SECTION"
head_ "6d/6e. the dwarf recordings of 6a ($WLS): capture size and report time against perf, like with like"
# sum of a column over the workloads' lines in $TMP/size.rows
colsum() { awk -v c="$1" -v f="${2:-%.0f}" '{s += $c} END {printf f, s}' "$TMP/size.rows"; }
: > "$TMP/size.rows"
for w in $WLS; do
	b=$(stat -c %s "$TMP/$w.dwarf.cap"); n=$(jget "$TMP/$w.dwarf.cap" .events.cpu)
	pb=$(stat -c %s "$TMP/$w.perf.data"); pn=$(perf_samples "$TMP/$w.perf.data")
	zstd -q -3 -f "$TMP/$w.perf.data" -o "$TMP/$w.perf.data.zst"
	pz=$(stat -c %s "$TMP/$w.perf.data.zst")
	ts=$(t "$STKREC" report -i "$TMP/$w.dwarf.cap") ||
		die "stkrec report ($w) failed: $(head -3 "$TMP/t.err")"
	tsg=$(t "$STKREC" report -g -i "$TMP/$w.dwarf.cap") ||
		die "stkrec report -g ($w) failed: $(head -3 "$TMP/t.err")"
	tp=$(t perf report -i "$TMP/$w.perf.data" --stdio --no-children -g none) ||
		die "perf report -g none ($w) failed: $(tail -3 "$TMP/t.err")"
	tpg=$(t perf report -i "$TMP/$w.perf.data" --stdio --no-children) ||
		die "perf report ($w) failed: $(tail -3 "$TMP/t.err")"
	note "$w: stkrec $b bytes, $n samples, report $ts s, -g $tsg s; perf.data $pb bytes ($pz after zstd -3), $pn samples, perf report -g none $tp s, call graph $tpg s"
	echo "$b $n $pb $pz $pn $ts $tsg $tp $tpg" >> "$TMP/size.rows"
	jfrag --arg w "$w" --argjson b "$b" --argjson n "$n" --argjson pb "$pb" --argjson pz "$pz" \
		--argjson pn "$pn" --argjson ts "$ts" --argjson tsg "$tsg" --argjson tp "$tp" \
		--argjson tpg "$tpg" \
		'{($w): {stkrec_bytes: $b, stkrec_samples: $n, perf_bytes: $pb, perf_zstd3_bytes: $pz,
			 perf_samples: $pn, stkrec_report_s: $ts, stkrec_report_g_s: $tsg,
			 perf_report_flat_s: $tp, perf_report_g_s: $tpg}}'
done
SB=$(colsum 1); SN=$(colsum 2); PB=$(colsum 3); PZ=$(colsum 4); PN=$(colsum 5)
TS=$(colsum 6 %.3f); TSG=$(colsum 7 %.3f); TP=$(colsum 8 %.3f); TPG=$(colsum 9 %.3f)
SBPS=$(div "$SB" "$SN" %.1f); PBPS=$(div "$PB" "$PN" %.1f); PZPS=$(div "$PZ" "$PN" %.1f)
RSZ=$(div "$SBPS" "$PZPS" %.4f)
VSZ=$(verdict "$RSZ" "<=" 0.05)
row "capture bytes per sample, dwarf" "stkrec $SBPS  perf.data after zstd -3 $PZPS  1/$(div "$PZPS" "$SBPS" %.0f)  target <= 1/20: $VSZ"
note "(perf.data raw: $PBPS bytes per sample)"
# rates: each tool's samples over its time (the recordings differ by a few samples)
RS=$(div "$SN" "$TS" %.0f); RP=$(div "$PN" "$TP" %.0f); XR=$(div "$RS" "$RP" %.1f)
RSG=$(div "$SN" "$TSG" %.0f); RPG=$(div "$PN" "$TPG" %.0f); XG=$(div "$RSG" "$RPG" %.1f)
VR=$(verdict "$XR" ">=" 10)
row "report time, flat, dwarf recordings" "stkrec report $TS s ($RS samples/s)  perf report --stdio --no-children -g none $TP s ($RP/s)  ${XR}x  target >= 10x: $VR"
row "report time, call graph" "stkrec report -g $TSG s ($RSG samples/s)  perf report --stdio --no-children $TPG s ($RPG/s)  ${XG}x"
note "(report times: median of $REPORT_RUNS runs per recording, summed)"
jfrag --argjson sb "$SB" --argjson sn "$SN" --argjson pb "$PB" --argjson pz "$PZ" --argjson pn "$PN" \
	--argjson sbps "$SBPS" --argjson pbps "$PBPS" --argjson pzps "$PZPS" --argjson r "$RSZ" \
	--arg v "$VSZ" --argjson ts "$TS" --argjson tp "$TP" --argjson rs "$RS" --argjson rp "$RP" \
	--argjson xr "$XR" --argjson tsg "$TSG" --argjson tpg "$TPG" --argjson rsg "$RSG" \
	--argjson rpg "$RPG" --argjson xg "$XG" --arg vr "$VR" --argjson runs "$REPORT_RUNS" \
	'{size: {stkrec_bytes: $sb, stkrec_samples: $sn, perf_bytes: $pb, perf_zstd3_bytes: $pz,
		 perf_samples: $pn, stkrec_bytes_per_sample: $sbps, perf_bytes_per_sample: $pbps,
		 perf_zstd3_bytes_per_sample: $pzps, ratio: $r, target: 0.05, verdict: $v},
	  report: {runs: $runs, stkrec_s: $ts, perf_s: $tp, stkrec_samples_per_s: $rs,
		   perf_samples_per_s: $rp, speedup: $xr, target: 10, verdict: $vr,
		   call_graph: {stkrec_s: $tsg, perf_s: $tpg, stkrec_samples_per_s: $rsg,
				perf_samples_per_s: $rpg, speedup: $xg}}}'

jq -n --slurpfile c "$TMP/json.complete" --slurpfile k "$TMP/json.cost" \
	--slurpfile s "$TMP/json.stress" --slurpfile z "$TMP/json.size" \
	'{completeness: ($c | add), cost: $k[0], throughput: $s[0],
	  per_workload: ($z | map(select(has("size") | not)) | add),
	  capture_vs_perf: $z[-1].size, report_vs_perf: $z[-1].report}' > "$JSON"
[ -n "${BENCH_UNWIND_JSON:-}" ] || echo "results: $JSON, table: $TABLE"
