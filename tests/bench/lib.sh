# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Sourced by the sections of make bench that also run alone (unwind.sh,
# pack.sh): bench_setup NAME WHY sets TMP (BENCH_TMP/NAME from run.sh, else
# a directory of its own, removed at exit), TABLE (BENCH_TABLE, else
# OUT/NAME.txt, emptied) and JSON (BENCH_<NAME>_JSON, else OUT/NAME.json),
# and checks root (WHY says what for) and the stkrec binary. Needs STKREC
# and OUT.

die() { echo "bench: $*" >&2; exit 1; }

bench_setup() {
	local name=$1 why=$2 json_var
	json_var=BENCH_${name^^}_JSON
	mkdir -p "$OUT"
	if [ -n "${BENCH_TMP:-}" ]; then
		TMP=$BENCH_TMP/$name
		mkdir -p "$TMP"
	else
		TMP=$(mktemp -d "/var/tmp/stkrec-bench-$name.XXXXXX")
		trap 'rm -rf "$TMP"' EXIT
	fi
	TABLE=${BENCH_TABLE:-$OUT/$name.txt}
	JSON=${!json_var:-$OUT/$name.json}
	[ -n "${BENCH_TABLE:-}" ] || : > "$TABLE"
	[ "$(id -u)" = 0 ] || die "needs root ($why)"
	[ -x "$STKREC" ] || die "no stkrec binary at $STKREC"
}
