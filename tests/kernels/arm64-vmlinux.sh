#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Regenerates bpf/arm64/vmlinux.h from the BTF of Debian 12's current arm64
# kernel, on any host: the -unsigned package is downloaded (never installed),
# its boot/vmlinuz unpacked and the raw .BTF section carved out of it, so no
# arm64 machine or qemu boot is needed.
#
# usage: tests/kernels/arm64-vmlinux.sh [OUTPUT]   (default bpf/arm64/vmlinux.h)
# Environment: KERNEL_PKG (a package name instead of the current one).
# Needs dpkg's arm64 architecture (make cross-deps-arm64 adds it), bpftool.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/../.." && pwd)
OUTPUT=${1:-$SRC/bpf/arm64/vmlinux.h}

die() { echo "arm64-vmlinux.sh: $*" >&2; exit 1; }

# linux-image-arm64 depends on the current ABI's image, e.g.
# linux-image-6.1.0-56-arm64; its -unsigned twin holds the same kernel.
pkg=${KERNEL_PKG:-}
if [ -z "$pkg" ]; then
	pkg=$(apt-cache depends linux-image-arm64:arm64 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ { sub(":.*", "", $2); print $2; exit }')
	[ -n "$pkg" ] || die "apt-cache knows no linux-image-arm64:arm64" \
		"(dpkg --add-architecture arm64 && apt-get update)"
	pkg=$pkg-unsigned
fi

tmp=$(mktemp -d /tmp/stkrec-arm64-btf.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# _apt cannot write to a 0700 directory; it would only warn, but be quiet.
chmod 755 "$tmp"
(cd "$tmp" && apt-get download -q "$pkg:arm64" >/dev/null 2>&1) ||
	die "apt-get download $pkg:arm64 failed"
# Only the kernel image is needed, not the 300 MB of modules.
dpkg-deb --fsys-tarfile "$tmp"/*.deb | tar -x -C "$tmp" --wildcards './boot/vmlinuz-*'
img=$(ls "$tmp"/boot/vmlinuz-*)

# Debian 12 ships arm64's Image uncompressed (PE "MZ" + "ARMd" at 0x38);
# other kernels gzip it or wrap it in an EFI zboot image ("zimg" at 4,
# payload offset and size at 8 and 12, the compressor's name at 24).
magic=$(od -An -t x1 -N 8 "$img" | tr -d ' \n')
case $magic in
1f8b*)
	gzip -dc <"$img" >"$tmp/Image"
	;;
4d5a????7a696d67)
	off=$(od -An -t u4 -j 8 -N 4 "$img" | tr -d ' ')
	size=$(od -An -t u4 -j 12 -N 4 "$img" | tr -d ' ')
	comp=$(dd if="$img" bs=1 skip=24 count=8 status=none | tr -d '\0')
	case $comp in
	gzip) dec="gzip -dc" ;;
	zstd) dec="zstd -dc" ;;
	xz) dec="xz -dc" ;;
	lzma) dec="xz --format=lzma -dc" ;;
	*) die "zboot payload compressed with '$comp': no decompressor here" ;;
	esac
	dd if="$img" iflag=skip_bytes,count_bytes skip="$off" count="$size" \
		bs=1M status=none | $dec >"$tmp/Image"
	;;
4d5a*)
	cp "$img" "$tmp/Image"
	;;
*)
	die "$(basename "$img"): unknown image format (magic $magic)"
	;;
esac

# The BTF header: magic 0xeb9f, version 1, flags 0, hdr_len 24, type_off 0,
# then type_len, str_off (= type_len), str_len. vmlinux has one such blob.
hits=$(LC_ALL=C grep -obUaP '\x9f\xeb\x01\x00\x18\x00\x00\x00\x00\x00\x00\x00' \
	"$tmp/Image" | cut -d: -f1)
[ "$(echo "$hits" | grep -c .)" = 1 ] || die "want one BTF header in the image, found: $hits"
read -r type_len str_off str_len < <(od -An -t u4 -j $((hits + 12)) -N 12 "$tmp/Image")
[ "$str_off" = "$type_len" ] || die "BTF header at $hits: str_off $str_off != type_len $type_len"
total=$((24 + str_off + str_len))
dd if="$tmp/Image" of="$tmp/btf" iflag=skip_bytes,count_bytes skip="$hits" count="$total" \
	bs=1M status=none

mkdir -p "$(dirname "$OUTPUT")"
bpftool btf dump file "$tmp/btf" format c >"$OUTPUT.tmp" ||
	{ rm -f "$OUTPUT.tmp"; die "bpftool rejects the carved BTF"; }
mv "$OUTPUT.tmp" "$OUTPUT"
echo "$(basename "$OUTPUT") from $pkg ($(basename "$img"), BTF $total bytes at $hits)"
