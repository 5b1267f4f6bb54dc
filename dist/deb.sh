#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# dist/deb.sh DIR VERSION DEB: the Debian package DEB of the tree that
# `make install PREFIX=/usr DESTDIR=DIR/debian/stkrec` staged (debhelper's
# layout, which dpkg-shlibdeps expects). Adds what Debian
# asks of a binary package: a stripped binary, the copyright and
# changelog.Debian.gz in /usr/share/doc/stkrec, DEBIAN/control with the
# Depends that dpkg-shlibdeps computes from the libraries the binary
# links, and DEBIAN/md5sums. SOURCE_DATE_EPOCH dates the changelog.
set -e
dir=$1 version=$2 deb=$3
dist=$(dirname "$0")
root=$dir/debian/stkrec
doc=$root/usr/share/doc/stkrec
bin=$root/usr/bin/stkrec

# As dh_strip does.
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$bin"

install -d -m 0755 "$doc" "$root/DEBIAN"
install -m 0644 "$dist/debian/copyright" "$doc/copyright"
maintainer=$(sed -n 's/^Maintainer: //p' "$dist/debian/control")
commit=$("$bin" --version | sed -n 's/.*(\(.*\))$/\1/p')
sed -e "s/@VERSION@/$version/" -e "s/@UPSTREAM@/${version%-*}/" \
	-e "s/@COMMIT@/${commit:-unknown}/" -e "s/@MAINTAINER@/$maintainer/" \
	-e "s/@DATE@/$(date -R -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}")/" \
	"$dist/debian/changelog" | gzip -9n >"$doc/changelog.Debian.gz"
chmod 0644 "$doc/changelog.Debian.gz"

# dpkg-shlibdeps reads debian/control, for the package's name only.
mkdir -p "$dir/debian"
printf 'Source: stkrec\n\nPackage: stkrec\nArchitecture: any\n' >"$dir/debian/control"
depends=$(cd "$dir" && dpkg-shlibdeps -O debian/stkrec/usr/bin/stkrec | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "deb.sh: dpkg-shlibdeps found no Depends" >&2; exit 1; }

(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z |
	xargs -0 md5sum) >"$root/DEBIAN/md5sums"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$(dpkg --print-architecture)/" \
	-e "s/@SIZE@/$size/" -e "s/@DEPENDS@/$depends/" "$dist/debian/control" >"$root/DEBIAN/control"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
dpkg-deb --root-owner-group --build "$root" "$deb" >/dev/null
