#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Does a kernel of the matrix freeze, and does stkrec make it? Boots the
# guest N times in a row, each boot running every check of check.sh with
# the recorder in MODE:
#   dwarf, fp  every recording with that --call-graph
#   none       the same workloads, no recorder
#   toggle     no recorder, no checks: the sched_switch tracepoint enabled
#              and disabled 3000 times through tracefs (the static key a
#              recorder's attach patches in __schedule) while two thread
#              pairs ping-pong (check.sh's toggle_probe)
# KERNEL_TCG_THREAD=multi runs the guest on a host thread per vCPU (qemu's
# -accel tcg,thread=multi), single on one for both (run.sh's default for
# rt-* kernels).
# A boot either reaches "checks done", dies, or makes no progress (no
# heartbeat from the guest) for KERNEL_TIMEOUT seconds (default 120) with
# its vCPUs stuck, as hang_dump.py finds through qemu's monitor (a guest
# whose vCPUs still move is only slow: the wait goes on); a stuck one gets
# an NMI, so the console shows every CPU's backtrace. Each hang's console and
# dump are kept in KERNEL_OUT/freeze/. Prints a line per boot, then
# "freeze KERNEL MODE: B boots, H hung, D died, C done".
#
# usage: freeze.sh KERNEL MODE N      (e.g. freeze.sh rt-amd64 dwarf 50)
#        KERNEL_TCG_THREAD=multi freeze.sh rt-amd64 toggle 10
set -euo pipefail
MODE=${2:?usage: freeze.sh KERNEL MODE N}
N=${3:?usage: freeze.sh KERNEL MODE N}
case $MODE in dwarf | fp | none | toggle) ;; *) echo "freeze.sh: MODE is dwarf, fp, none or toggle" >&2; exit 2 ;; esac
KERNEL_TIMEOUT=${KERNEL_TIMEOUT:-120}
# shellcheck source=run.sh
. "$(dirname "$0")/run.sh" "$1"
KERNEL_APPEND="${KERNEL_APPEND:-} STKREC_PROBE=$MODE"

pkg=$(package_of)
kdir=$OUT/$pkg
mkdir -p "$kdir" "$OUT/freeze"
fetch_kernel "$pkg" "$kdir"
build_base "$kdir/base.cpio.gz"
cat "$kdir/modules.cpio.gz" "$kdir/base.cpio.gz" >"$kdir/initrd.img"
log=$kdir/console.log
hung=0 died=0 done=0
for i in $(seq 1 "$N"); do
	fresh_disk "$kdir/disk.img"
	t0=$(date +%s)
	st=0
	boot tcg "$kdir" "$log" >/dev/null || st=$?
	t=$(($(date +%s) - t0))
	case $st in
	0)
		done=$((done + 1))
		slow=$(grep -c '^verdict: moving' "$log.slow" 2>/dev/null || true)
		[ "$slow" = 0 ] && slow=
		echo "boot $i $MODE: done in ${t}s${slow:+, silent but moving $slow times}"
		;;
	3)
		hung=$((hung + 1))
		keep=$OUT/freeze/$KERNEL-$MODE-$i-$(date +%s)
		cp "$log" "$keep.console"
		cp "$log.dump" "$keep.dump" 2>/dev/null || true
		echo "boot $i $MODE: HUNG after ${t}s, in: $(tr -d '\r' <"$log" | grep '^recording ' | tail -1); kept $keep.*"
		;;
	*)
		died=$((died + 1))
		keep=$OUT/freeze/$KERNEL-$MODE-$i-$(date +%s)
		cp "$log" "$keep.console"
		echo "boot $i $MODE: died after ${t}s: $(tr -d '\r' <"$log" | grep -v '^$' | tail -3 | tr '\n' '|')"
		;;
	esac
done
echo "freeze $KERNEL $MODE: $N boots, $hung hung, $died died, $done done"
