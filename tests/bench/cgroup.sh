#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make bench, section 12: cgroups (issue 27). N busy cgroups (default 50),
# each a sleeper (tests/workloads: 2 ms naps, ~500 switches/s) in its own
# cgroup v2 directory named as Docker names one; stkrec record -a over
# them, side by side in the same run:
#   - W: the whole host (every event carries its cgroup id) and, with
#     BENCH_CGROUP_BEFORE=BINARY (a build of the tree before the cgroup
#     ids, e.g. db6fd76), the same with that binary: the BPF cost per call
#     of the sched_switch and CPU-sample programs (bpf_stats) before and
#     after, and capture bytes per event, CGROUP records written;
#   - G: -G one of the N cgroups: the same programs' cost, the events, the
#     recorder's CPU time against W's (user+sys, /usr/bin/time).
#
# Run by run.sh (STKREC, BENCH_TMP, BENCH_TABLE, BENCH_CGROUP_JSON), or
# alone as root from the checkout: tests/bench/cgroup.sh writes
# build/bench/cgroup.txt and cgroup.json. Environment: STKREC, BENCH_OUT
# (build/bench), BENCH_CGROUP_N (50), BENCH_CGROUP_SECONDS (5),
# BENCH_CGROUP_BEFORE (unset: no before column), STKREC_WORKLOADS.
set -euo pipefail

STKREC=$(realpath "${STKREC:-build/stkrec}")
OUT=$(realpath -m "${BENCH_OUT:-build/bench}") # absolute: sections cd
N=${BENCH_CGROUP_N:-50}
SECS=${BENCH_CGROUP_SECONDS:-5}
BEFORE=${BENCH_CGROUP_BEFORE:-}
SLEEPER=$(realpath "${STKREC_WORKLOADS:-build/workloads}")/sleeper
. "$(dirname "$0")/lib.sh"
section cgroup "BPF, bpf_stats, cgroups"
for t in jq bpftool /usr/bin/time; do
	command -v "$t" >/dev/null || die "$t missing (make bench installs it)"
done
[ -x "$SLEEPER" ] || die "no $SLEEPER (make test-build)"
MNT=$(awk '$0 ~ / - cgroup2 / {print $5; exit}' /proc/self/mountinfo)
[ -n "$MNT" ] || die "no cgroup2 file system mounted"
prog_ns() { prog_stats "$1" "$2" | awk '{print ($2 > 0) ? int($1 / $2) : 0}'; }

# N cgroups, a sleeper in each for long enough
PIDS=()
CGS=()
cleanup_cgroups() {
	[ ${#PIDS[@]} = 0 ] || kill "${PIDS[@]}" 2>/dev/null || true
	wait 2>/dev/null || true
	for c in "${CGS[@]}"; do rmdir "$c" 2>/dev/null || true; done
}
trap 'cleanup_cgroups; [ -n "${BENCH_TMP:-}" ] || rm -rf "$TMP"' EXIT
mkdir -p "$MNT/system.slice"
for i in $(seq "$N"); do
	c=$MNT/system.slice/docker-$(printf '%064x' $((0xb0 + i))).scope
	mkdir -p "$c"
	CGS+=("$c")
	sh -c "echo 0 > $c/cgroup.procs && exec $SLEEPER 600000 2" >/dev/null &
	PIDS+=($!)
done
ONE=${CGS[0]#"$MNT"}

# run TAG BIN OPTS...: "switch_ns cpu_ns events bytes cpu_s cgroups"
run() {
	local tag=$1 bin=$2 tp rp sw cpu u s
	shift 2
	/usr/bin/time -f '%U %S' -o "$TMP/$tag.time" "$bin" record -a -e offcpu,cpu -F 199 \
		--call-graph fp "$@" -o "$TMP/$tag.cap" >/dev/null 2>"$TMP/$tag.err" &
	tp=$!
	wait_attached "$tp" "$TMP/$tag.err" || die "record $tag did not attach: $(tail -3 "$TMP/$tag.err")"
	rp=$(pgrep -P "$tp") || die "record $tag: no recorder under time"
	sleep "$SECS"
	sw=$(prog_ns "$rp" stkrec_switch)
	cpu=$(prog_ns "$rp" stkrec_cpu)
	kill -INT "$rp"
	wait "$tp" || die "record $tag failed: $(tail -3 "$TMP/$tag.err")"
	info "$TMP/$tag.cap"
	read -r u s < "$TMP/$tag.time"
	echo "$sw $cpu $(jget "$TMP/$tag.cap" '.events.offcpu + .events.cpu') $(stat -c %s \
		"$TMP/$tag.cap") $(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}') \
		$(grep -o '^  -G kept out: [0-9]*' "$TMP/$tag.err" | grep -o '[0-9]*$' || echo 0)"
}

STATS=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -q -w kernel.bpf_stats_enabled=1
read -r SW_W CPU_W EV_W B_W T_W _ < <(run w "$STKREC")
read -r SW_G CPU_G EV_G B_G T_G OUT_G < <(run g "$STKREC" -G "$ONE")
SW_B=0; CPU_B=0; EV_B=0; B_B=0
if [ -n "$BEFORE" ]; then
	read -r SW_B CPU_B EV_B B_B _ _ < <(run b "$BEFORE")
fi
sysctl -q -w kernel.bpf_stats_enabled="$STATS"

head_ "12. cgroups: $N busy cgroups (a sleeper each, 2 ms naps), record -a -e offcpu,cpu -F 199, ${SECS} s"
if [ -n "$BEFORE" ]; then
	row "sched_switch program, ns per call" "$SW_W with cgroup ids, $SW_B before ($(basename "$BEFORE"))"
	row "CPU-sample program, ns per call" "$CPU_W with cgroup ids, $CPU_B before"
	row "capture bytes per event" "$(div "$B_W" "$EV_W") with cgroup ids, $(div "$B_B" "$EV_B") before"
else
	row "sched_switch program, ns per call" "$SW_W (BENCH_CGROUP_BEFORE: the cost before)"
	row "CPU-sample program, ns per call" "$CPU_W"
	row "capture bytes per event" "$(div "$B_W" "$EV_W")"
fi
row "-G one cgroup of $N: events" "$EV_G of $EV_W whole host ($OUT_G off-CPU switches kept out)"
row "-G one cgroup: sched_switch ns per call" "$SW_G (whole host $SW_W)"
row "-G one cgroup: recorder CPU" "$T_G s against $T_W s whole host ($(div "$T_G" "$T_W") x)"
cat > "$JSON" <<JSON
{"cgroups": $N, "seconds": $SECS, "switch_ns": $SW_W, "cpu_ns": $CPU_W, "events": $EV_W,
 "bytes": $B_W, "recorder_cpu_s": $T_W, "before_switch_ns": $SW_B, "before_cpu_ns": $CPU_B,
 "before_events": $EV_B, "before_bytes": $B_B, "g_switch_ns": $SW_G, "g_cpu_ns": $CPU_G,
 "g_events": $EV_G, "g_bytes": $B_G, "g_recorder_cpu_s": $T_G, "g_kept_out_offcpu": $OUT_G}
JSON
