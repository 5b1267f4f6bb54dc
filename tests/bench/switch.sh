#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make bench, section 15: where a context switch's time goes, to choose
# what to make cheaper.
# 15a the sched_switch program's ns per call (bpf_stats) while record -a -e
#     offcpu records perf bench sched pipe, in variants of one build that
#     each leave one part out: STKREC_TEST_UCACHE=off the kept walks
#     (bpf/unwind.bpf.h, bpf/kstack.bpf.h), =user the kept kernel walks,
#     -K the user walk, -U the kernel's, --call-graph fp what dwarf adds
#     over frame pointers, -m 1000000 the ring buffer (no interval of the
#     load is sent).
# 15b how often a thread's off-CPU interval has the stacks of its previous
#     one (user, kernel, both), from stkrec script of three loads: the pipe
#     benchmark, make -j2 of the test workloads, python3.11's threaded
#     http.server with a client. What a per-thread cache of the last walk
#     could serve at most, and what the kept walks served
#     (unwind.cached.offcpu, kstack.cached.offcpu).
# Medians of ROUNDS (15a). Run by run.sh (STKREC, BENCH_TMP, BENCH_TABLE,
# BENCH_SWITCH_JSON), or alone as root from the checkout:
# tests/bench/switch.sh writes build/bench/switch.txt and switch.json.
# Environment: STKREC, BENCH_OUT (build/bench), BENCH_SWITCH_ROUNDS (3),
# BENCH_SWITCH_LOOPS (60000).
set -euo pipefail

STKREC=$(realpath "${STKREC:-build/stkrec}")
OUT=$(realpath -m "${BENCH_OUT:-build/bench}") # absolute: sections cd
ROUNDS=${BENCH_SWITCH_ROUNDS:-3}
LOOPS=${BENCH_SWITCH_LOOPS:-60000}
SRC=$(realpath "$(dirname "$0")/../..")
PY=/usr/bin/python3.11
# shellcheck source=tests/bench/lib.sh
. "$(dirname "$0")/lib.sh"
section switch "BPF, bpf_stats"
for t in perf jq bpftool make; do
	command -v "$t" >/dev/null || die "$t missing (make bench installs it)"
done
idle_warning
head_ "15. a context switch's cost by part, and how often a thread's stacks repeat"

# switch_ns [off|user] ARGS...: stkrec_switch's ns per call over one pipe
# run recorded with record -a -e offcpu ARGS; off: every stack walked anew,
# user: every kernel stack (STKREC_TEST_UCACHE, DEVELOPERS.md)
switch_ns() {
	local rp uc=
	case ${1:-} in off | user) uc=$1; shift ;; esac
	STKREC_TEST_UCACHE=$uc "$STKREC" record -a -e offcpu "$@" -o "$TMP/s.cap" >/dev/null \
		2>"$TMP/s.err" &
	rp=$!
	wait_attached "$rp" "$TMP/s.err" ||
		die "stkrec record $* did not attach: $(tail -3 "$TMP/s.err")"
	perf bench sched pipe -l "$LOOPS" >/dev/null 2>&1
	prog_stats "$rp" stkrec_switch | awk '{print ($2 > 0) ? int($1 / $2) : 0}'
	kill -INT "$rp"
	wait "$rp" || die "stkrec record $* failed: $(tail -3 "$TMP/s.err")"
}

NAMES=(all no_kept no_kkept no_user no_kernel fp no_ring)
ARGS=("" "off" "user" "-K" "-U" "--call-graph fp" "-m 1000000")
STATS=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -q -w kernel.bpf_stats_enabled=1
for n in "${NAMES[@]}"; do : > "$TMP/$n"; done
for i in $(seq "$ROUNDS"); do
	for j in "${!NAMES[@]}"; do
		# shellcheck disable=SC2086 # ARGS are words
		switch_ns ${ARGS[$j]} >> "$TMP/${NAMES[$j]}"
	done
	echo "  round $i: $(for n in "${NAMES[@]}"; do printf '%s %s  ' "$n" "$(tail -1 "$TMP/$n")"; done)"
done
sysctl -q -w kernel.bpf_stats_enabled="$STATS"
for n in "${NAMES[@]}"; do declare "NS_$n=$(median < "$TMP/$n")"; done
# shellcheck disable=SC2154 # NS_* are declared above
{
	UW=$((NS_all - NS_no_user)); KW=$((NS_all - NS_no_kernel)); KEPT=$((NS_no_kept - NS_all))
	KKEPT=$((NS_no_kkept - NS_all))
	DW=$((NS_all - NS_fp)); RB=$((NS_all - NS_no_ring)); REST=$((NS_all - UW - KW))
}
row "sched_switch, dwarf, user + kernel stacks" "$NS_all ns per call"
row "  every stack walked anew (kept walks off)" "$NS_no_kept ns: the kept walks save $KEPT ns"
row "  every kernel stack walked anew (user kept only)" "$NS_no_kkept ns: the kept kernel walks save $KKEPT ns"
row "  the user walk, kept walks on (-K leaves it out)" "$UW ns ($NS_no_user without)"
row "  the kernel walk (-U leaves it out)" "$KW ns ($NS_no_kernel without)"
row "  dwarf over frame pointers (fp)" "$DW ns ($NS_fp with fp)"
row "  the ring buffer (-m 1000000)" "$RB ns ($NS_no_ring without)"
row "  the rest (slot, names, ring buffer)" "$REST ns"

# repeats CAP: "events first same_user same_kernel same_both" of its off-CPU
# intervals, each against its thread's previous one
repeats() {
	"$STKREC" script -i "$1" -e offcpu 2>/dev/null | awk '
	function flush() {
		if (tid == "") return
		n++
		if (tid in pu) {
			su += pu[tid] == u; sk += pk[tid] == k; sb += pu[tid] == u && pk[tid] == k
		} else {
			first++
		}
		pu[tid] = u; pk[tid] = k; tid = ""
	}
	/ offcpu: / { flush(); split($2, a, "/"); tid = a[2]; u = ""; k = ""; next }
	/^\t/ { if ($1 ~ /^ffff/) k = k " " $1; else u = u " " $1; next }
	/^$/ { flush() }
	END { flush(); print n + 0, first + 0, su + 0, sk + 0, sb + 0 }'
}

# repeat_row NAME WHAT CMD...: CMD recorded, its repeats as a row and in
# $TMP/rep.NAME
repeat_row() {
	local name=$1 what=$2 n f su sk sb kept kkept
	shift 2
	"$STKREC" record -q -e offcpu -o "$TMP/$name.cap" -- "$@" >/dev/null 2>"$TMP/$name.err" ||
		die "stkrec record -- $what failed: $(tail -3 "$TMP/$name.err")"
	kept=$("$STKREC" info --json "$TMP/$name.cap" | jq -r '"\(.unwind_cached.offcpu) \(.kstack_cached.offcpu)"')
	echo "$(repeats "$TMP/$name.cap") $kept" > "$TMP/rep.$name"
	read -r n f su sk sb kept kkept < "$TMP/rep.$name"
	row "  $what" "$n intervals, $f first of their thread; same user $(div $((100 * su)) "$n" %.1f)%, kernel $(div $((100 * sk)) "$n" %.1f)%, both $(div $((100 * sb)) "$n" %.1f)%; from kept walks: user $(div $((100 * kept)) "$n" %.1f)%, kernel $(div $((100 * kkept)) "$n" %.1f)%"
}

note "stacks the same as the thread's previous interval (a per-thread cache's best):"
repeat_row pipe "perf bench sched pipe" perf bench sched pipe -l "$LOOPS"
repeat_row make "make -j2 workloads (fresh)" make -s -j2 -C "$SRC" OUT="$TMP/mk" workloads
if [ -x "$PY" ]; then
	(cd "$TMP" && repeat_row python "python3.11 http.server, 8 s" "$PY" -c '
import http.server, threading, time, urllib.request
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
threading.Thread(target=s.serve_forever, daemon=True).start()
url = "http://127.0.0.1:%d/" % s.server_address[1]
end = time.time() + 8
while time.time() < end:
    urllib.request.urlopen(url).read()
s.shutdown()')
else
	note "python3.11 http.server: skipped, no $PY"
	echo "0 0 0 0 0 0 0" > "$TMP/rep.python"
fi

rep_json() { jq -n --argjson v "[$(tr ' ' , < "$TMP/rep.$1")]" \
	'{intervals: $v[0], first_of_thread: $v[1], same_user: $v[2], same_kernel: $v[3], same_both: $v[4],
	  kept_user: $v[5], kept_kernel: $v[6]}'; }
jq -n --argjson all "$NS_all" --argjson nu "$NS_no_user" --argjson nk "$NS_no_kernel" \
	--argjson fp "$NS_fp" --argjson nr "$NS_no_ring" --argjson nkept "$NS_no_kept" \
	--argjson nkkept "$NS_no_kkept" \
	--argjson loops "$LOOPS" \
	--argjson rounds "$ROUNDS" --argjson pipe "$(rep_json pipe)" \
	--argjson make "$(rep_json make)" --argjson python "$(rep_json python)" '{
	loops: $loops, rounds: $rounds,
	switch_ns: {all: $all, no_kept_walks: $nkept, no_kept_kernel_walks: $nkkept,
		    no_user_stack: $nu, no_kernel_stack: $nk, fp: $fp, no_ring: $nr},
	repeats: {pipe: $pipe, make: $make, python: $python}
}' > "$JSON"
