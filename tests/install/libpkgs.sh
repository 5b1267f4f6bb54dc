#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tests/install/libpkgs.sh BIN: the Debian package of each library `ldd BIN`
# shows, one "PACKAGE needed" (BIN's own DT_NEEDED) or "PACKAGE indirect"
# (a library's) a line, sorted. dpkg -S knows a file by the path its package
# ships, /lib/... or /usr/lib/... (merged /usr), so both are tried.
set -e
needed=$(readelf -d "$1" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p')
ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | while read -r soname path; do
	pkg=$( (dpkg -S "$path" || dpkg -S "/usr$path" || dpkg -S "${path#/usr}") 2>/dev/null |
		head -1 | cut -d: -f1)
	pkg=${pkg:-"(no package ships $path)"}
	if echo "$needed" | grep -qxF "$soname"; then
		echo "$pkg needed"
	else
		echo "$pkg indirect"
	fi
done | sort -u
