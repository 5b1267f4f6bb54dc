#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The kernel matrix's checks: real recordings of every event kind with known
# workloads, judged here, on the kernel under test. Runs as /init's child in
# a qemu guest (busybox sh) and directly on the host for its own kernel.
#
# usage: check.sh DISK MOUNTPOINT
#   DISK: a block device (vda, loop0) whose file system is mounted at
#   MOUNTPOINT; block I/O is checked once per I/O scheduler it offers of
#   "none" and "mq-deadline".
# Environment: STKREC (binary), W (workload directory), T (scratch dir).
# Prints one line per check: "ok NAME", "FAIL NAME: why" or "skip NAME: why";
# the test on the host asserts each. "note NAME: ..." lines say what a
# check measured.

DISK=$1
MNT=$2
STKREC=${STKREC:-stkrec}
W=${W:-/w}
T=${T:-/tmp}
LIMIT=${LIMIT:-120} # seconds a recording may take before it counts as hung

ok() { echo "ok $1"; }
fail() { echo "FAIL $1: $2"; }

# The recorder PID and its children (the recorded command).
family() {
	echo "$1" $(grep -l "^PPid:[[:space:]]*$1\$" /proc/[0-9]*/status 2>/dev/null |
		cut -d/ -f3)
}

# A recording past LIMIT: where each of its threads and its children
# wait (state, wchan, kernel stack), as note lines.
hung() {
	for p in $(family "$1"); do
		for t in /proc/"$p"/task/*; do
			echo "note $name.hung: $(cat "$t/comm" 2>/dev/null) ${t#/proc/}" \
				"$(grep '^State' "$t/status" 2>/dev/null | tr -s '\t ' ' ')" \
				"wchan $(cat "$t/wchan" 2>/dev/null);" \
				"$(cut -d' ' -f2 "$t/stack" 2>/dev/null | head -12 | tr '\n' ' ')"
		done
	done
}

# STKREC_PROBE (freeze.sh, on the kernel's command line): dwarf or fp
# records every check with that call graph first (a check's own
# --call-graph comes later and wins); none runs each check's workload (or
# sleeps its -d) without stkrec, the same load with no recorder.
PROBE=${STKREC_PROBE:-}

# The workload of a recording without the recorder: the command after
# --, else a sleep of -d's seconds.
no_recorder() {
	d=1
	while [ $# -gt 0 ]; do
		case $1 in
		--) shift; "$@"; return ;;
		-d) d=$2; shift ;;
		esac
		shift
	done
	sleep "$d"
}

# record NAME ARGS...: record into $T/NAME.cap, keep stderr; ok when exit 0
record() {
	name=$1
	shift
	echo "recording $name" # on the console, for a hang's report
	case $PROBE in
	none) no_recorder "$@" >"$T/$name.out" 2>"$T/$name.err" & ;;
	dwarf | fp) "$STKREC" record --call-graph "$PROBE" -o "$T/$name.cap" "$@" \
		>"$T/$name.out" 2>"$T/$name.err" & ;;
	*) "$STKREC" record -o "$T/$name.cap" "$@" >"$T/$name.out" 2>"$T/$name.err" & ;;
	esac
	pid=$!
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt $((LIMIT * 10)) ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$pid" 2>/dev/null; then
		hung "$pid"
		kill -9 $(family "$pid")
	fi
	wait "$pid"
	st=$?
	if [ $st -eq 0 ]; then
		ok "$name.record"
		# where the kernel has tp_btf, its programs must load (a
		# verifier refusal falls back to raw_tp, saying so)
		grep -q 'refused the tp_btf programs' "$T/$name.err" &&
			fail "$name.tp_btf" "$(grep -m1 'refused the tp_btf' "$T/$name.err")"
		return 0
	fi
	[ $i -ge $((LIMIT * 10)) ] && st="$st, killed after ${LIMIT}s"
	fail "$name.record" "exit $st: $(head -c 300 "$T/$name.err" | tr '\n' ' ')"
	return 1
}

# nothing lost: info says 0 lost and prints no WARNING (but those matching
# the ERE $2, which the caller checks otherwise)
check_lost() {
	name=$1
	"$STKREC" info "$T/$name.cap" >"$T/$name.info" 2>&1
	lost=$(grep '^lost events:' "$T/$name.info")
	case "$lost" in
	*"offcpu 0, cpu 0, bio 0, sideband 0, wakeup 0") ok "$name.lost0" ;;
	*) fail "$name.lost0" "$lost" ;;
	esac
	warn=$(grep '^WARNING' "$T/$name.info" | grep -v -E "${2:-^$}" || true)
	# waits whose end, and sleeps whose wakeup, the kernel traced to no
	# program (bpf.untraced.offcpu and .wakeup, README "Where threads
	# wait"): the kernel's, said but not failed when they are all the
	# events not recorded
	untraced=$("$STKREC" report -i "$T/$name.cap" --header 2>/dev/null |
		grep -o 'bpf\.untraced\.[a-z]* [0-9]*' | awk '{n += $2} END {print n + 0}')
	if [ "${untraced:-0}" -gt 0 ] &&
		echo "$warn" | grep -q "^WARNING: *$untraced events not recorded: the kernel did not run"; then
		echo "note $name.untraced: $untraced waits whose end or wakeup no probe saw"
		warn=$(echo "$warn" | grep -v "^WARNING: *$untraced events not recorded: the kernel did not run" || true)
	fi
	if [ -n "$warn" ]; then
		fail "$name.warnings" "$(echo "$warn" | head -3 | tr '\n' ' ')"
	else
		ok "$name.warnings"
	fi
}

# folded NAME PATTERN MIN: at least MIN (samples, or off-CPU us) on stacks matching PATTERN
check_folded() {
	name=$1
	pat=$2
	min=$3
	label=$4
	"$STKREC" report -i "$T/$name.cap" --folded >"$T/$name.folded" 2>"$T/$name.ferr"
	sum=$(grep -E "$pat" "$T/$name.folded" | awk '{ s += $NF } END { print s + 0 }')
	if [ "$sum" -ge "$min" ]; then
		ok "$name.$label"
	else
		fail "$name.$label" "stacks matching '$pat' sum to $sum, want >= $min; top: $(sort -t' ' -k2 -n -r "$T/$name.folded" | head -2 | tr '\n' '|')"
	fi
}

check_offcpu() {
	record offcpu -e offcpu -- "$W/sleeper" 1000 10 || return
	check_lost offcpu
	# about 1 s of naps in the named thread, through the workload's frames
	check_folded offcpu 'sleeper-nap;.*sleeper_thread;sleeper_loop;.*do_nanosleep' 800000 stack
	record mutex -e offcpu -- "$W/mutexwait" 2 10 5 || return
	check_lost mutex
	check_folded mutex 'mutex-worker;.*futex' 1 stack
}

check_cpu() {
	record cpu -e cpu -F 199 -- "$W/cpuburn" 1000 25 || return
	check_lost cpu
	check_folded cpu 'cpuburn;.*main;burn_loop;burn_a' 10 burn_a
	check_folded cpu 'cpuburn;.*main;burn_loop;burn_b' 30 burn_b
}

# Block I/O of a known writer under scheduler $1: biotop names it, with
# exactly the 4 MiB it wrote with O_DIRECT (perf sees its 64 requests at
# block_getrq and block_rq_issue in its own context on 6.1 and 6.18).
check_bio() {
	sched=$1
	dev=$(basename "$DISK")
	qf=/sys/block/$dev/queue/scheduler
	if ! grep -qw "$sched" "$qf"; then
		echo "skip bio-$sched: $dev has no scheduler $sched ($(cat "$qf"))"
		return
	fi
	echo "$sched" >"$qf" 2>/dev/null
	if ! grep -q "\[$sched\]" "$qf"; then
		fail "bio-$sched.scheduler" "$(cat "$qf")"
		return
	fi
	ok "bio-$sched.scheduler"
	# whole system (-a with a command: no pid filter), so the attribution
	# is the kernel side's; the command starts once the programs are on
	record "bio-$sched" -a -e bio -- sh -c "'$W/odirect' '$MNT/odirect.dat' 64 65536 >/dev/null; sync" ||
		return
	# the host's other disks complete requests too, and a completion
	# that interrupts the program on its CPU is skipped by the kernel,
	# counted (bpf.skipped.bio, bio.incomplete) and not attributable to
	# a disk: those two warnings are the writer's exact bytes' to judge
	check_lost "bio-$sched" 'not run the recorder|not seen completing'
	"$STKREC" report -i "$T/bio-$sched.cap" --biotop >"$T/bio-$sched.top" 2>&1
	kb=$(awk '$2 == "odirect" && $3 == "W" { s += $(NF-1) } END { print s + 0 }' "$T/bio-$sched.top")
	if [ "$kb" -eq 4096 ]; then
		ok "bio-$sched.writer"
	else
		fail "bio-$sched.writer" "odirect wrote $kb KiB in biotop, want 4096: $(head -8 "$T/bio-$sched.top" | tr '\n' '|')"
	fi
	if grep -q '\[unknown\]' "$T/bio-$sched.top"; then
		unk=$(awk '$2 == "[unknown]" && $3 == "W" { s += $(NF-1) } END { print s + 0 }' "$T/bio-$sched.top")
	else
		unk=0
	fi
	# writeback of the odirect file's metadata may be a kernel thread's, never unknown
	[ "$unk" -eq 0 ] && ok "bio-$sched.no_unknown" ||
		fail "bio-$sched.no_unknown" "$unk KiB written by [unknown]"
}

# The default event set, whole system, while each kind has work: the
# recording that failed to load on 6.1.
check_default() {
	record default -a -- sh -c "'$W/cpuburn' 500 25; '$W/sleeper' 200 10; '$W/odirect' '$MNT/default.dat' 16 65536" || return
	# -a records every request of the guest's disks, the journal's and
	# the recorder's own writes too: one still in flight when the
	# recording stops is said (bio.incomplete), as it should be (seen on
	# the arm64 guest beside a load: 2); the exact bytes are bio-*'s
	check_lost default 'not seen completing'
	ev=$(grep '^events:' "$T/default.info")
	case "$ev" in
	*"offcpu 0,"* | *" cpu 0,"* | *"bio 0,"*) fail default.events "$ev" ;;
	*) ok default.events ;;
	esac
	check_default_call_graph
}

# The call graph that recording chose with no --call-graph (info's "call
# graph:" line): dwarf on x86-64 kernels (PREEMPT_RT ones too), fp
# elsewhere. The check's name says which it expected, so that
# tests/test_kernels.c asserts the kernel was taken for what it is.
check_default_call_graph() {
	cg=$(grep '^call graph:' "$T/default.info" | awk '{ print $3 }')
	if [ "$(uname -m)" = x86_64 ]; then
		want=dwarf name=default.call_graph.dwarf
	else
		want=fp name=default.call_graph.fp
	fi
	if [ "$cg" = "$want" ]; then
		ok "$name"
	else
		fail "$name" "info says '$(grep '^call graph:' "$T/default.info")', want $want (uname -v: $(uname -v))"
	fi
}

# No kernel BTF (hidden in a private mount namespace): one line naming it,
# exit 1, before anything is loaded.
check_btf() {
	mkdir -p "$T/empty"
	unshare -m sh -c "mount --bind '$T/empty' /sys/kernel/btf &&
		exec '$STKREC' record -a -d 1 -o '$T/nobtf.cap'" >"$T/nobtf.out" 2>"$T/nobtf.err"
	st=$?
	lines=$(wc -l <"$T/nobtf.err")
	if [ $st -eq 1 ] && [ "$lines" -eq 1 ] && grep -q 'BTF' "$T/nobtf.err"; then
		ok btf.missing
	else
		fail btf.missing "exit $st, $lines lines: $(head -c 300 "$T/nobtf.err" | tr '\n' ' ')"
	fi
}

# The nofp-burn thread of nofp_threads (built without frame pointers):
# CPU samples whose user stack is the whole chain from the thread's entry
# in libc (start_thread, named where the machine has libc's symbols).
BURN_CHAIN=';(start_thread|libc[.]so[.]6[+]0x[0-9a-f]+);t_burn;outer;middle;inner [0-9]+$'
BURN_HZ=49

# burn_share NAME: $hit of the $all CPU samples of nofp-burn in NAME.cap
# have the whole chain; 1 when the report fails
burn_share() {
	hit=0
	all=0
	"$STKREC" report -i "$T/$1.cap" --folded -e cpu -U --comm nofp-burn \
		>"$T/$1.folded" 2>"$T/$1.ferr" || return 1
	hit=$(grep -E "$BURN_CHAIN" "$T/$1.folded" | awk '{ s += $NF } END { print s + 0 }')
	all=$(awk '{ s += $NF } END { print s + 0 }' "$T/$1.folded")
}

# The two heaviest stacks of NAME.folded, for a failure message.
top_stacks() {
	sort -t' ' -k2 -n -r "$T/$1.folded" | head -2 | tr '\n' '|'
}

# --call-graph dwarf (x86-64 only): the user stacks of a program built
# without frame pointers, unwound in the kernel from .eh_frame, have the
# frames that frame pointers cannot see; fp on the same program proves
# the difference. Elsewhere: one warning line, then an fp recording.
check_dwarf() {
	record dwarf -e cpu -F $BURN_HZ --call-graph dwarf -- "$W/nofp_threads" 1500 ||
		return
	check_lost dwarf
	warn=$(grep -c 'warning' "$T/dwarf.err")
	cg=$(grep '^call graph:' "$T/dwarf.info")
	if [ "$(uname -m)" != x86_64 ]; then
		line='stkrec: warning: record: --call-graph dwarf unwinds x86-64 only; recording with --call-graph fp'
		if [ "$warn" -eq 1 ] && grep -qxF "$line" "$T/dwarf.err"; then
			ok dwarf.fallback
		else
			fail dwarf.fallback "$warn warning lines: $(grep warning "$T/dwarf.err" | head -3 | tr '\n' '|')"
		fi
		case "$cg" in
		"call graph:   fp "*) ok dwarf.call_graph ;;
		*) fail dwarf.call_graph "info: '$cg'" ;;
		esac
		return
	fi
	case "$warn $cg" in
	"0 call graph:   dwarf "*) ok dwarf.call_graph ;;
	*) fail dwarf.call_graph "info: '$cg'; record: $(grep warning "$T/dwarf.err" | head -3 | tr '\n' '|')" ;;
	esac
	# Samples taken before the tables of a new mapping are in place are
	# walked with frame pointers ("unwinding:" in info: ~120 ms under
	# TCG, 6 samples), and some land in the clock_gettime of t_burn's
	# loop: hence 75%, of 1.5 s (~70 samples; 85-92% measured).
	if ! burn_share dwarf; then
		fail dwarf.burn_chain "report: $(head -c 300 "$T/dwarf.ferr" | tr '\n' ' ')"
	else
		echo "note dwarf.burn_chain: $hit of $all nofp-burn samples have the whole chain; $(grep '^unwinding:' "$T/dwarf.info"); top: $(top_stacks dwarf)"
		if [ "$all" -ge 20 ] && [ $((hit * 100)) -ge $((all * 75)) ]; then
			ok dwarf.burn_chain
		else
			fail dwarf.burn_chain "$hit of $all nofp-burn samples have the whole chain, want >= 20 samples, 75%; top: $(top_stacks dwarf)"
		fi
	fi
	record fp -e cpu -F $BURN_HZ --call-graph fp -- "$W/nofp_threads" 1000 || return
	if ! burn_share fp; then
		fail fp.burn_cut "report: $(head -c 300 "$T/fp.ferr" | tr '\n' ' ')"
		return
	fi
	echo "note fp.burn_cut: $hit of $all nofp-burn samples have the whole chain; top: $(top_stacks fp)"
	if [ "$all" -ge 20 ] && [ $((hit * 100)) -lt $((all * 10)) ]; then
		ok fp.burn_cut
	else
		fail fp.burn_cut "$hit of $all nofp-burn samples have the whole chain, want >= 20 samples, < 10%; top: $(top_stacks fp)"
	fi
}

# A thread blocked in read() through the whole recording (the task
# iterators): one wait, open at both ends, in pipe_read.
check_waits() {
	"$W/blocker" pipe >"$T/blocker.out" 2>&1 &
	bp=$!
	sleep 1
	record waits -e offcpu -p "$bp" -d 1 || { kill "$bp"; return; }
	kill "$bp"
	check_lost waits
	"$STKREC" script -i "$T/waits.cap" --folded --comm blk-waiter >"$T/waits.script" 2>&1
	n=$(grep -c 'offcpu: ' "$T/waits.script")
	if [ "$n" -eq 1 ] && grep -q ' open:both .*pipe_read' "$T/waits.script"; then
		ok waits.open_both
	else
		fail waits.open_both "$n waits: $(head -c 300 "$T/waits.script" | tr '\n' '|')"
	fi
}

# cgroup v2 (init.sh mounts it in a guest): a sleeper in a cgroup named
# as Docker names one, recorded with -G that cgroup: its waits carry it,
# info lists it with its events and names the container, and -G kept the
# rest of the system out.
check_cgroup() {
	mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	id=cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc
	rel=/system.slice/docker-$id.scope
	if [ -z "$mnt" ]; then
		fail cgroup.record "no cgroup2 mount"
		return
	fi
	made=
	[ -d "$mnt/system.slice" ] || made=$mnt/system.slice
	mkdir -p "$mnt$rel" || { fail cgroup.record "mkdir $mnt$rel"; return; }
	record cgroup -e offcpu -G "$rel" -- sh -c \
		"echo \$\$ >$mnt$rel/cgroup.procs && exec $W/sleeper 500 10"
	st=$?
	rmdir "$mnt$rel" ${made:+"$made"}
	[ $st = 0 ] || return
	check_lost cgroup
	line=$(grep "^cgroup: *$rel: offcpu [1-9][0-9]*, cpu 0, bio 0, wakeup 0; docker:cccccccccccc\$" \
		"$T/cgroup.info")
	others=$(grep -c '^cgroup:' "$T/cgroup.info")
	if [ -n "$line" ] && [ "$others" = 1 ]; then
		ok cgroup.events
	else
		fail cgroup.events "$others cgroups: $(grep '^cgroup:' "$T/cgroup.info" | head -3 | tr '\n' '|')"
	fi
}

# Who woke each wait (sched_waking): the pipe reader by the writer, and an
# O_DIRECT writer's waits by the completion of its own 64 KiB requests.
check_wakeup() {
	record wakeup -e offcpu,wakeup -- "$W/pipewait" 10 30 || return
	check_lost wakeup
	"$STKREC" report -i "$T/wakeup.cap" --folded --wakers --comm pipe-reader \
		>"$T/wakeup.folded" 2>&1
	if grep -qE '^pipe-reader;.*pipe_read;.*;--;.*;pipewait [0-9]+$' "$T/wakeup.folded"; then
		ok wakeup.pipe_writer
	else
		fail wakeup.pipe_writer "$(head -c 300 "$T/wakeup.folded" | tr '\n' '|')"
	fi
	# 64 writes: under TCG a request can complete before its writer
	# sleeps (the completion interrupt preempts it in virtqueue_notify,
	# and it never waits); of 8 writes, none slept in ~1 run of 10; of
	# 64, 11 to 64 slept and were joined (12 runs, rt and cloud kernels),
	# but on an idle host none of 64 did once (arm64, 2026-11-27), and
	# beside stress-ng the writer's only waits in pwrite were preemptions
	# (cloud-amd64, 2026-11-27): up to three recordings, until one write
	# waits on its request.
	for try in 1 2 3; do
		record wakeio -e offcpu,wakeup,bio -- "$W/odirect" "$MNT/wakeio.dat" 64 65536 ||
			return
		"$STKREC" report -i "$T/wakeio.cap" --folded --wakers --comm odirect \
			>"$T/wakeio.folded" 2>&1
		n=$(grep -c ';\[io [^ ]* W 64K\] [0-9]*$' "$T/wakeio.folded")
		[ "$n" -ge 1 ] && break
	done
	if [ "$n" -ge 1 ]; then
		ok wakeup.io_request
	else
		fail wakeup.io_request "no wait joined to a 64K write: $(grep -c . "$T/wakeio.folded") lines; $("$STKREC" info "$T/wakeio.cap" 2>&1 | grep -E '^(events|lost)' | tr '\n' ' '); the writes' waits and wakers: $(grep 'pwrite' "$T/wakeio.folded" | sed 's/.*vfs_write;//' | head -3 | tr '\n' '|')"
	fi
}

# STKREC_PROBE=toggle: no recorder at all; the sched_switch tracepoint
# enabled and disabled through tracefs TOGGLES times (the same static key
# text_poke_bp() patches in __schedule when a recorder attaches) while two
# thread pairs ping-pong over pipes (burst pipe 2 0).
toggle_probe() {
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
	ev=/sys/kernel/tracing/events/sched/sched_switch/enable
	[ -w "$ev" ] || { echo "FAIL toggle: no $ev"; return; }
	"$W/burst" pipe 2 0 >/dev/null 2>&1 &
	l1=$!
	l2=
	i=0
	while [ $i -lt "${TOGGLES:-3000}" ]; do
		echo 1 >"$ev"
		echo 0 >"$ev"
		i=$((i + 1))
		[ $((i % 250)) = 0 ] && echo "recording toggle $i"
	done
	kill $l1 $l2 2>/dev/null
	echo "ok toggle.$i"
}

echo
echo "kernel $(uname -r) $(uname -m)"
if [ "$PROBE" = toggle ]; then
	toggle_probe
	echo "checks done"
	exit 0
fi
check_default
check_waits
check_wakeup
check_btf
check_cgroup
check_offcpu
check_cpu
check_dwarf
check_bio none
check_bio mq-deadline
echo "checks done"
