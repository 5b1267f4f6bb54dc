#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# One kernel of the matrix: runs tests/kernels/check.sh on it and prints the
# check lines ("ok NAME", "FAIL NAME: why", "skip NAME: why") and what some
# checks measured ("note NAME: figures").
#
# usage: run.sh KERNEL
#   host            this machine's kernel, directly, on an ext4 loop device
#   amd64, cloud-amd64, rt-amd64, arm64, cloud-arm64, rt-arm64
#                   Debian 12's current kernel of that flavour (the one
#                   linux-image-FLAVOUR depends on), its -unsigned package
#                   downloaded (apt-get download, never installed) and booted
#                   under qemu with the freshly built stkrec and workloads in
#                   an initramfs (busybox-static, the libraries ldd names)
#                   and a virtio disk holding an ext4 file system.
# Environment: STKREC, STKREC_WORKLOADS (the binaries to test), KERNEL_OUT
# (cache and logs, default build/kernels), KERNEL_ACCEL (auto, kvm or tcg;
# auto tries KVM where /dev/kvm exists and falls back to TCG when KVM cannot
# run the kernel), KERNEL_TCG_THREAD (single: TCG on one host thread;
# multi: one per vCPU; default single: guests freeze under multi-threaded
# TCG in code patching's cross-CPU wait, rt-* ones with no recorder at all
# (README, Kernels), cloud-amd64 twice in one run on 2026-11-27),
# KERNEL_TIMEOUT (seconds without the guest's heartbeat,
# every 5 s of its time, before it counts as hung; default 300),
# KERNEL_PKG (a package name instead of the current one), KERNEL_APPEND
# (more kernel parameters, e.g. loglevel=7 for every kernel message; the
# default, 4, shows errors: stall and hung-task reports).
# Exit: 0 when the checks ran (whatever they said), 77 when this machine
# cannot run the kernel (the reason on stderr), 1 on a harness failure.
set -euo pipefail

KERNEL=${1:?usage: run.sh KERNEL}
SRC=$(cd "$(dirname "$0")" && pwd)
OUT=$(mkdir -p "${KERNEL_OUT:-build/kernels}" && cd "${KERNEL_OUT:-build/kernels}" && pwd)
STKREC=$(realpath "${STKREC:-build/stkrec}")
WDIR=$(realpath "${STKREC_WORKLOADS:-build/workloads}")
TIMEOUT=${KERNEL_TIMEOUT:-300}
WORKLOADS="sleeper mutexwait cpuburn odirect nofp_threads blocker pipewait burst"

die() { echo "run.sh: $*" >&2; exit 1; }
cant() { echo "run.sh: $*" >&2; exit 77; }

# --- this machine's kernel, directly ------------------------------------
run_host() {
	local img
	[ "$(id -u)" = 0 ] || cant "the host kernel's checks need root"
	command -v losetup >/dev/null && command -v mkfs.ext4 >/dev/null ||
		cant "losetup or mkfs.ext4 missing"
	tmp=$(mktemp -d /var/tmp/stkrec-kernels.XXXXXX)
	img=$tmp/disk.img
	truncate -s 256M "$img"
	mkfs.ext4 -q -F "$img"
	dev=$(losetup -f --show "$img") || cant "no loop device"
	mkdir "$tmp/mnt" "$tmp/scratch"
	trap 'umount "$tmp/mnt" 2>/dev/null; losetup -d "$dev"; rm -rf "$tmp"' EXIT
	mount "$dev" "$tmp/mnt"
	STKREC=$STKREC W=$WDIR T=$tmp/scratch sh "$SRC/check.sh" "$dev" "$tmp/mnt"
}

# --- a Debian kernel under qemu -----------------------------------------
arch_of() {
	case $KERNEL in
	*arm64) echo arm64 ;;
	*) echo amd64 ;;
	esac
}

# linux-image-6.1.0-56-cloud-amd64-unsigned for cloud-amd64
package_of() {
	local dep
	[ -n "${KERNEL_PKG:-}" ] && { echo "$KERNEL_PKG"; return; }
	dep=$(apt-cache depends "linux-image-$KERNEL:$(arch_of)" 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ { sub(":.*", "", $2); print $2; exit }')
	[ -n "$dep" ] || cant "apt-cache knows no linux-image-$KERNEL (apt-get update?)"
	echo "$dep-unsigned"
}

# The guest's drivers where the flavour builds them as modules (each with
# what modules.dep says it needs), for busybox modprobe; /modules.load
# lists them in load order.
GUEST_MODULES="virtio_pci virtio_mmio virtio_blk crc32c_generic ext4"
copy_modules() {
	local root=$1 ver=$2 dst=$3 m dep f
	local mdir=lib/modules/$ver
	mkdir -p "$dst/$mdir"
	cp "$root/$mdir"/modules.{dep,builtin,order} "$dst/$mdir/" 2>/dev/null || true
	: >"$dst/modules.load"
	for m in $GUEST_MODULES; do
		dep=$(grep -E "(^|/)$m\.ko(\.[a-z]+)?:" "$root/$mdir/modules.dep" || true)
		[ -n "$dep" ] || continue
		for f in ${dep/:/}; do
			mkdir -p "$dst/$mdir/$(dirname "$f")"
			cp "$root/$mdir/$f" "$dst/$mdir/$f"
		done
		echo "$m" >>"$dst/modules.load"
	done
}

# Extract the kernel and the modules the guest loads; cached per package.
# Leaves $kdir/vmlinuz and $kdir/modules.cpio.gz.
fetch_kernel() {
	local pkg=$1 kdir=$2 deb root ver
	[ -f "$kdir/modules.cpio.gz" ] && return
	mkdir -p "$OUT/debs"
	deb=$(ls "$OUT/debs/${pkg}_"*.deb 2>/dev/null | head -1 || true)
	if [ -z "$deb" ]; then
		(cd "$OUT/debs" && apt-get download -q "$pkg:$(arch_of)" >/dev/null 2>"$OUT/debs/err") ||
			cant "apt-get download $pkg:$(arch_of) failed: $(grep -v '^$' "$OUT/debs/err" | tail -2 | tr '\n' ' ')"
		deb=$(ls "$OUT/debs/${pkg}_"*.deb | head -1)
	fi
	root=$(mktemp -d "$OUT/extract.XXXXXX")
	dpkg-deb -x "$deb" "$root"
	ver=$(ls "$root/lib/modules")
	busybox depmod -b "$root" "$ver"
	copy_modules "$root" "$ver" "$kdir/modroot"
	(cd "$kdir/modroot" && find . | cpio -o -H newc --quiet) | gzip -1 >"$kdir/modules.cpio.gz.tmp"
	cp "$root"/boot/vmlinuz-* "$kdir/vmlinuz"
	rm -rf "$root" "$kdir/modroot"
	mv "$kdir/modules.cpio.gz.tmp" "$kdir/modules.cpio.gz"
}

# The guest's busybox: this machine's for amd64; for arm64 the static
# aarch64 one of busybox-static:arm64, downloaded (never installed: it would
# replace the amd64 one) and cached.
guest_busybox() {
	local deb dir=$OUT/busybox-$(arch_of)
	[ "$(arch_of)" = amd64 ] && { echo /bin/busybox; return; }
	if [ ! -x "$dir/bin/busybox" ]; then
		mkdir -p "$OUT/debs"
		(cd "$OUT/debs" && apt-get download -q "busybox-static:$(arch_of)" >/dev/null 2>"$OUT/debs/err") ||
			cant "apt-get download busybox-static:$(arch_of) failed (dpkg --add-architecture?): $(grep -v '^$' "$OUT/debs/err" | tail -2 | tr '\n' ' ')"
		deb=$(ls "$OUT/debs/busybox-static_"*"_$(arch_of).deb" | head -1)
		dpkg-deb -x "$deb" "$dir"
	fi
	echo "$dir/bin/busybox"
}

# The libraries of the guest's binaries: ldd for amd64; for a cross build
# (ldd cannot run it) the DT_NEEDED entries resolved in the multiarch
# directories, recursively, and the program interpreter.
guest_libs() {
	local dirs f n d todo seen=" "
	[ "$(arch_of)" = amd64 ] && {
		for f in "$@"; do ldd "$f" 2>/dev/null | grep -o '/[^ ]*' || true; done
		return
	}
	dirs="/lib/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu"
	readelf -l "$1" | sed -n 's/.*interpreter: \(.*\)]/\1/p'
	todo="$*"
	while [ -n "$todo" ]; do
		set -- $todo
		f=$1; shift; todo="$*"
		for n in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
			case $seen in *" $n "*) continue ;; esac
			seen="$seen$n "
			for d in $dirs; do
				[ -e "$d/$n" ] && { echo "$d/$n"; todo="$todo $d/$n"; continue 2; }
			done
			die "$n (needed by $f) is not in $dirs (make cross-deps-arm64?)"
		done
	done
}

# The symbols (no DWARF) of each library that has a debug file on this
# machine (libc6-dbg), at its build-id path under /usr/lib/debug in the
# guest: the report there then names libc's frames (start_thread) as on
# the host. A few hundred KiB for libc.
copy_debug_symbols() {
	local root=$1 lib id dbg
	command -v objcopy >/dev/null || return 0
	while read -r lib; do
		id=$(readelf -n "$lib" 2>/dev/null | awk '/Build ID:/ { print $3; exit }')
		[ -n "$id" ] || continue
		dbg=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
		[ -f "$dbg" ] || continue
		mkdir -p "$root$(dirname "$dbg")"
		objcopy --strip-debug "$dbg" "$root$dbg" 2>/dev/null || rm -f "$root$dbg"
	done
}

# The part of the initramfs that does not depend on the kernel: busybox,
# /init, stkrec, the workloads and their libraries (and those libraries'
# symbols), the checks.
build_base() {
	local base=$1 root f lib
	root=$(mktemp -d "$OUT/base.XXXXXX")
	mkdir -p "$root"/{bin,proc,sys,dev,tmp,mnt,w}
	cp "$(guest_busybox)" "$root/bin/busybox"
	cp "$STKREC" "$root/bin/stkrec"
	for f in $WORKLOADS; do cp "$WDIR/$f" "$root/w/$f"; done
	cp "$SRC/check.sh" "$root/check.sh"
	cp "$SRC/init.sh" "$root/init"
	chmod +x "$root/init"
	guest_libs "$STKREC" $(for f in $WORKLOADS; do echo "$WDIR/$f"; done) | sort -u >"$root/libs"
	while read -r lib; do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done <"$root/libs"
	copy_debug_symbols "$root" <"$root/libs"
	rm "$root/libs"
	(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 >"$base"
	rm -rf "$root"
}

# qemu's -accel option: under TCG, with its thread= (KERNEL_TCG_THREAD)
accel_opt() {
	local thread=${KERNEL_TCG_THREAD:-single}

	[ "$1" = tcg ] || thread=
	echo "$1${thread:+,thread=$thread}"
}

qemu_cmd() {
	local accel=$1 kdir=$2
	case $(arch_of) in
	amd64)
		echo qemu-system-x86_64 -machine q35 -accel "$(accel_opt "$accel")" \
			$([ "$accel" = tcg ] && echo "-cpu max" || echo "-cpu host")
		;;
	arm64)
		# pauth-impdef: TCG's QARMA pointer authentication triples
		# the boot time of a kernel built with ARM64_PTR_AUTH_KERNEL.
		echo qemu-system-aarch64 -machine virt -accel "$(accel_opt "$accel")" -cpu max,pauth-impdef=on
		;;
	esac
}

console() {
	case $(arch_of) in
	amd64) echo ttyS0 ;;
	arm64) echo ttyAMA0 ;;
	esac
}

# A guest whose heartbeat stopped: where its vCPUs are (five samples of
# each one's instruction pointer through qemu's monitor, named from the
# guest's kallsyms, which init.sh writes to the disk at boot: Debian ships
# no System.map). 0 when they are stuck (each in a loop it does not leave,
# or with interrupts off in every sample);
# then an NMI, and HANG_PARAMS make the kernel panic with every CPU's
# backtrace on the console. 1 when they move: a guest slowed down by a
# busy host (TCG), not a frozen one.
hang_dump() {
	local kdir=$1
	rm -f "$kdir/kallsyms"
	debugfs -R "dump /kallsyms $kdir/kallsyms" "$kdir/disk.img" >/dev/null 2>&1 || true
	python3 "$SRC/hang_dump.py" "$kdir/monitor.sock" "$kdir/kallsyms" check || return 1
	hang_nmi "$kdir"
}

hang_nmi() {
	python3 "$SRC/hang_dump.py" "$1/monitor.sock" "$1/kallsyms" nmi || true
	sleep 15
}

# Kernel parameters for hang_dump: an NMI from the monitor panics the
# guest and prints all CPUs' backtraces (panic_print bit 6, Linux 5.18+).
# no_timer_check: a TCG guest on a busy host fails the IO-APIC timer's
# calibration and panics at 0.03 s ("IO-APIC + timer doesn't work!", seen
# once in 6 rt boots at load 20), a check of the emulator, not the kernel.
HANG_PARAMS="unknown_nmi_panic=1 panic_print=0x40 no_timer_check"

# Boot once; 0 when the checks finished, 2 when KVM cannot run this
# kernel (qemu fails, or the guest is not up within a minute), 3 when the
# guest made no progress (no heartbeat for TIMEOUT seconds and its vCPUs
# stuck, or no end after 10 x TIMEOUT), 1 when the guest died.
boot() {
	local accel=$1 kdir=$2 log=$3 pid t=0 beats=0 n last start
	: >"$log"
	$(qemu_cmd "$accel" "$kdir") -m 2048 -smp 2 -nographic -no-reboot \
		-kernel "$kdir/vmlinuz" -initrd "$kdir/initrd.img" \
		-append "console=$(console) panic=-1 loglevel=4 $HANG_PARAMS ${KERNEL_APPEND:-}" -net none \
		-drive "file=$kdir/disk.img,if=virtio,format=raw" \
		-monitor "unix:$kdir/monitor.sock,server=on,wait=off" \
		</dev/null >"$log" 2>&1 &
	pid=$!
	last=$(date +%s)
	start=$last
	rm -f "$log.slow"
	while kill -0 $pid 2>/dev/null; do
		if [ "$accel" = kvm ] && ! grep -aq 'stkrec-guest-up' "$log" &&
			{ grep -q 'KVM internal error\|emulation failure' "$log" || [ $t -ge 120 ]; }; then
			kill $pid; wait $pid 2>/dev/null || true
			return 2
		fi
		# progress is the guest's heartbeat (init.sh), not the time a
		# boot takes: a host busy with other work slows TCG down
		n=$(grep -ac 'stkrec-alive' "$log" || true)
		[ "$n" != "$beats" ] && { beats=$n; last=$(date +%s); }
		if [ $(($(date +%s) - last)) -ge "$TIMEOUT" ]; then
			if hang_dump "$kdir" >"$log.dump" 2>&1 ||
				[ $(($(date +%s) - start)) -ge $((TIMEOUT * 10)) ]; then
				# the backtraces, whatever the verdict
				grep -q '^nmi sent' "$log.dump" || hang_nmi "$kdir" >>"$log.dump" 2>&1
				kill $pid; wait $pid 2>/dev/null || true
				return 3
			fi
			# slow, not stuck: noted, and the wait goes on
			cat "$log.dump" >>"$log.slow"
			last=$(date +%s)
		fi
		sleep 0.5
		t=$((t + 1))
	done
	wait $pid 2>/dev/null || true
	grep -aq '^checks done' <(tr -d '\r' <"$log") && return 0
	[ "$accel" = kvm ] && ! grep -aq 'stkrec-guest-up' "$log" && return 2
	echo "FAIL boot: the guest stopped before the checks ended ($accel): $(tr -d '\r' <"$log" | tail -5 | tr '\n' '|')"
	return 1
}

# The guest's disk: an empty ext4 file system.
fresh_disk() {
	rm -f "$1"
	truncate -s 256M "$1"
	mkfs.ext4 -q -F "$1"
}

run_qemu() {
	local pkg kdir log accel st
	# another architecture's guest runs the cross build beside the native one
	if [ "$(arch_of)" != "$(dpkg --print-architecture)" ]; then
		STKREC=$(dirname "$STKREC")/$(arch_of)/stkrec
		WDIR=$(dirname "$WDIR")/$(arch_of)/workloads
		[ -x "$STKREC" ] || cant "no $(arch_of) build at $STKREC (make cross-deps-$(arch_of); make ARCH=$(arch_of) all workloads)"
	fi
	command -v "$(qemu_cmd tcg x | awk '{print $1}')" >/dev/null ||
		cant "$(qemu_cmd tcg x | awk '{print $1}') not installed"
	command -v busybox >/dev/null || cant "busybox (busybox-static) not installed"
	pkg=$(package_of)
	kdir=$OUT/$pkg
	mkdir -p "$kdir"
	fetch_kernel "$pkg" "$kdir"
	build_base "$kdir/base.cpio.gz"
	cat "$kdir/modules.cpio.gz" "$kdir/base.cpio.gz" >"$kdir/initrd.img"
	fresh_disk "$kdir/disk.img"
	log=$kdir/console.log
	accel=${KERNEL_ACCEL:-auto}
	if [ "$accel" = auto ]; then
		accel=tcg
		# KVM runs only guests of this machine's architecture.
		[ -w /dev/kvm ] && [ "$(cat "$OUT/kvm-broken" 2>/dev/null)" != 1 ] &&
			[ "$(dpkg --print-architecture)" = "$(arch_of)" ] && accel=kvm
	fi
	echo "kernel package $pkg, qemu -accel $(accel_opt "$accel")"
	st=0
	boot "$accel" "$kdir" "$log" || st=$?
	if [ $st = 2 ]; then
		echo "KVM cannot run $pkg here ($(tr -d '\r' <"$log" | grep -v '^$' | tail -1)): TCG"
		echo 1 >"$OUT/kvm-broken"
		st=0
		boot tcg "$kdir" "$log" || st=$?
	fi
	# A guest that stopped making progress: rt-amd64 under TCG froze
	# whole three times in about 35 boots on 2026-11-26, dwarf the
	# default then (README, Kernels: open). A freeze is a failure of this
	# kernel, whatever the next boot does: a FAIL line with the console's
	# end, the console kept as console.log.hung; the kernel boots once
	# more, so that the run still says what its checks found.
	if [ $st = 3 ]; then
		echo "FAIL boot.hung: the guest made no progress ($accel; no heartbeat for ${TIMEOUT}s, vCPUs $(grep -h '^verdict' "$log.dump" 2>/dev/null | tail -1 | cut -d' ' -f2)); console (with every CPU's backtrace) in $log.hung, its end: $(tr -d '\r' <"$log" | grep -v '^$' | tail -8 | tr '\n' '|')"
		cp "$log" "$log.hung"
		fresh_disk "$kdir/disk.img"
		st=0
		boot "$accel" "$kdir" "$log" || st=$?
		if [ $st = 3 ]; then
			echo "FAIL boot: no progress ($accel), twice: $(tr -d '\r' <"$log" | grep -v '^$' | tail -5 | tr '\n' '|')"
		fi
	fi
	tr -d '\r' <"$log" | grep -aE '^(ok|FAIL|skip|note|kernel) |^checks done$' || true
	return 0
}

# freeze.sh sources this file for its functions
[ "${BASH_SOURCE[0]}" = "$0" ] || return 0
case $KERNEL in
host) run_host ;;
*) run_qemu ;;
esac
