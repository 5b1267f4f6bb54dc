#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make bench, section 14: start and idle (issue 30's targets), the default
# --call-graph dwarf.
# 14a the attach: seconds from the recorder's exec to its attach line
#     ("stkrec: recording ...", printed once every program is attached),
#     record -a; target 0.3 s.
# 14b record -- true: wall and system CPU seconds, dwarf and fp (most of
#     dwarf's extra is the verifier checking the unwinder).
# 14c a 10 s whole-system recording of this host as it is (run the bench on
#     an idle host): CPU seconds (user + system) and peak RSS of stkrec
#     record -a (default kinds, its symbol pack at the end included) and
#     of perf record -e sched:sched_switch -g -a; targets 2x perf's CPU
#     and 40 MB.
# Medians of ROUNDS. Run by run.sh (STKREC, BENCH_TMP, BENCH_TABLE,
# BENCH_START_JSON), or alone as root from the checkout:
# tests/bench/start.sh writes build/bench/start.txt and start.json.
# Environment: STKREC, BENCH_OUT (build/bench), BENCH_START_ROUNDS (5),
# BENCH_START_SECS (10).
set -euo pipefail

STKREC=$(realpath "${STKREC:-build/stkrec}")
OUT=$(realpath -m "${BENCH_OUT:-build/bench}") # absolute: sections cd
ROUNDS=${BENCH_START_ROUNDS:-5}
SECS=${BENCH_START_SECS:-10}
# shellcheck source=tests/bench/lib.sh
. "$(dirname "$0")/lib.sh"
section start "BPF, perf -a"
for t in perf jq /usr/bin/time; do
	command -v "$t" >/dev/null || die "$t missing (make bench installs it)"
done
idle_warning
head_ "14. start and idle, --call-graph dwarf ($ROUNDS rounds, medians; ${SECS} s of this host as it is)"

# seconds from the exec to the attach line, polled every 5 ms
attach_s() {
	local t0 t1= l rp
	# the line read as it comes, timed without a process per look (a
	# fork and exec takes milliseconds on some hosts, and a CPU from the
	# recorder starting on the other)
	rm -f "$TMP/a.fifo" "$TMP/a.err"
	mkfifo "$TMP/a.fifo"
	t0=$EPOCHREALTIME
	"$STKREC" record -a -d 1 -o "$TMP/a.cap" 2> "$TMP/a.fifo" &
	rp=$!
	while IFS= read -r l; do
		[ -n "$t1" ] || case $l in 'stkrec: recording '*) t1=$EPOCHREALTIME ;; esac
		echo "$l" >> "$TMP/a.err"
	done < "$TMP/a.fifo"
	wait "$rp" || die "record -a failed: $(tail -2 "$TMP/a.err")"
	[ -n "$t1" ] || die "record -a said no recording line: $(tail -2 "$TMP/a.err")"
	awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", b - a}'
}

true_s() {
	/usr/bin/time -f '%e %S' -o "$TMP/t.time" \
		"$STKREC" record -q --call-graph "$1" -o "$TMP/t.cap" -- true 2> "$TMP/t.err" ||
		die "record -- true failed: $(tail -2 "$TMP/t.err")"
	cat "$TMP/t.time"
}

# SECS s of the whole host: "cpu_s rss_kb"; $1 extra options
idle_stkrec() {
	/usr/bin/time -f '%U %S %M' -o "$TMP/i.time" \
		"$STKREC" record -a -q -d "$SECS" -o "$TMP/i.cap" "$@" 2> "$TMP/i.err" ||
		die "record -a failed: $(tail -2 "$TMP/i.err")"
	awk '{print $1 + $2, $3}' "$TMP/i.time"
}
# perf's own build-id pass at the end (its default) sometimes dies here on
# an assertion (util/build-id.c): tried three times, the failures counted.
PERF_CRASHES=0
idle_perf() {
	local i
	for i in 1 2 3; do
		if /usr/bin/time -f '%U %S %M' -o "$TMP/p.time" \
			perf record -q -e sched:sched_switch -g -a -o "$TMP/p.data" "$@" -- \
			sleep "$SECS" > /dev/null 2> "$TMP/p.err"; then
			awk '{print $1 + $2, $3}' "$TMP/p.time"
			return
		fi
		PERF_CRASHES=$((PERF_CRASHES + 1))
	done
	echo "perf record failed three times: $(tail -2 "$TMP/p.err" | head -1)" > "$TMP/perf.fail"
	return 1
}

: > "$TMP/attach"; : > "$TMP/dwarf"; : > "$TMP/fp"
: > "$TMP/is"; : > "$TMP/ip"; : > "$TMP/isn"; : > "$TMP/ipb"
for _ in $(seq "$ROUNDS"); do
	attach_s >> "$TMP/attach"
	true_s dwarf >> "$TMP/dwarf"
	true_s fp >> "$TMP/fp"
done
for _ in $(seq 3); do
	idle_stkrec >> "$TMP/is"
	idle_perf >> "$TMP/ip" || true
	idle_stkrec --no-pack >> "$TMP/isn"
	idle_perf -B >> "$TMP/ipb" || die "$(cat "$TMP/perf.fail")"
done
col() { awk -v c="$2" '{print $c}' "$1" | median; }
AT=$(col "$TMP/attach" 1)
DW=$(col "$TMP/dwarf" 1); DS=$(col "$TMP/dwarf" 2)
FW=$(col "$TMP/fp" 1); FS=$(col "$TMP/fp" 2)
SC=$(col "$TMP/is" 1); SR=$(col "$TMP/is" 2)
NC=$(col "$TMP/isn" 1); NR=$(col "$TMP/isn" 2)
BC=$(col "$TMP/ipb" 1); BR=$(col "$TMP/ipb" 2)
PEER="perf"
if [ -s "$TMP/ip" ]; then
	PC=$(col "$TMP/ip" 1); PR=$(col "$TMP/ip" 2)
else
	# perf's default never completed: its -B run is the peer, said so
	PC=$BC; PR=$BR; PEER="perf -B"
fi
row "attach (record -a, exec to its line)" "$AT s (target 0.3 s: $(verdict "$AT" "<=" 0.3))"
row "record -- true, wall / system CPU" "dwarf $DW s / $DS s; fp $FW s / $FS s"
row "${SECS} s of the host: CPU s" "stkrec $SC, $PEER $PC: $(div "$SC" "$PC")x (target 2x: $(verdict "$SC" "<=" "$(awk -v p="$PC" 'BEGIN {print 2 * p}')"))"
row "${SECS} s of the host: peak RSS" "stkrec $((SR / 1024)) MB, $PEER $((PR / 1024)) MB (target 40 MB: $(verdict "$SR" "<=" 40960))"
row "the same without names (--no-pack, perf -B)" "CPU s stkrec $NC, perf $BC: $(div "$NC" "$BC")x; peak RSS $((NR / 1024)) MB, $((BR / 1024)) MB"
[ "$PERF_CRASHES" = 0 ] || note "perf record died $PERF_CRASHES times in its build-id pass (retried; the host's other processes' files trip it)"

jq -n --argjson at "$AT" --argjson dw "$DW" --argjson ds "$DS" --argjson fw "$FW" \
	--argjson fs "$FS" --argjson sc "$SC" --argjson sr "$SR" --argjson pc "$PC" \
	--argjson pr "$PR" --argjson secs "$SECS" --argjson nc "$NC" --argjson nr "$NR" \
	--argjson bc "$BC" --argjson br "$BR" --argjson crashes "$PERF_CRASHES" \
	'{attach_s: $at, true_dwarf: {wall_s: $dw, sys_s: $ds}, true_fp: {wall_s: $fw, sys_s: $fs},
	  idle: {secs: $secs, stkrec_cpu_s: $sc, stkrec_rss_kb: $sr, perf_cpu_s: $pc,
		 perf_rss_kb: $pr, perf_crashes: $crashes},
	  idle_no_names: {stkrec_cpu_s: $nc, stkrec_rss_kb: $nr, perf_cpu_s: $bc, perf_rss_kb: $br}}' \
	> "$JSON"
[ -n "${BENCH_START_JSON:-}" ] || echo "results: $JSON, table: $TABLE"
