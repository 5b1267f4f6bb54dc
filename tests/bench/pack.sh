#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make bench, section 7: the symbol pack (FORMAT.md §4.18) of a whole-system
# recording, against its targets (issue 15), each printed with PASS or MISS:
#
# 7a time: `stkrec record -a -d SECONDS` as the host runs (plus a Node
#    program with --perf-basic-prof, so that JIT maps are read too): the
#    time the recorder took to write the pack at the end, from its summary,
#    with the binaries, symbols, addresses and JIT entries packed. Target:
#    at most 1 s for 10 s.
# 7b size: the same recording with --no-pack, then `stkrec pack` on it: the
#    bytes the pack adds (the file after minus before: the same events),
#    per distinct user address the capture's stacks hit (what the pack
#    named plus what nothing could name, from PACK_INFO). Target: at most
#    64 bytes on average. Per address packed (PACK_ADDR) too, the
#    stricter figure: unnamed addresses cost nothing.
#
# Run by run.sh (which passes STKREC, BENCH_TMP, BENCH_TABLE and
# BENCH_PACK_JSON), or alone as root from the checkout: tests/bench/pack.sh
# writes build/bench/pack.txt and pack.json. Environment: STKREC,
# BENCH_OUT (default build/bench), BENCH_PACK_SECONDS (default 10),
# BENCH_PACK_ROUNDS (default 3: medians).
set -euo pipefail

STKREC=$(realpath "${STKREC:-build/stkrec}")
OUT=${BENCH_OUT:-build/bench}
SECONDS_=${BENCH_PACK_SECONDS:-10}
ROUNDS=${BENCH_PACK_ROUNDS:-3}
. "$(dirname "$0")/lib.sh"
section pack BPF
for t in jq awk; do
	command -v "$t" >/dev/null || die "$t missing (make bench installs it)"
done


# A JIT load beside the host's own: Node's hot loop with its perf map.
NODE=$(command -v node || true)
jit_load() {
	[ -n "$NODE" ] || return 0
	cat > "$TMP/hot.js" <<-'EOF'
	function hotLoop(n) { let s = 0; for (let i = 0; i < n; i++) s += Math.sqrt(i) * Math.sin(i); return s; }
	const t = Date.now(); let s = 0;
	while (Date.now() - t < Number(process.argv[2])) s += hotLoop(100000);
	EOF
	# in $TMP: with --perf-basic-prof, node writes isolate-*-v8.log files
	# into its working directory
	(cd "$TMP" && exec "$NODE" --perf-basic-prof hot.js "$1" >/dev/null) &
	NODEPID=$!
}
jit_done() {
	[ -n "${NODEPID:-}" ] && wait "$NODEPID" 2>/dev/null || true
	[ -n "${NODEPID:-}" ] && rm -f "/tmp/perf-$NODEPID.map"
	NODEPID=
}

# record_once TAG [ARGS]: record -a for SECONDS_ with the JIT load
record_once() {
	local tag=$1
	shift
	jit_load $((SECONDS_ * 1000 - 500))
	"$STKREC" record -a -d "$SECONDS_" -o "$TMP/$tag.cap" "$@" 2>"$TMP/$tag.err" ||
		die "stkrec record failed: $(tail -3 "$TMP/$tag.err")"
	jit_done
}

head_ "7. symbol pack of a ${SECONDS_} s whole-system recording (record -a, host as it runs + node --perf-basic-prof), $ROUNDS rounds, medians"
: > "$TMP/t"; : > "$TMP/bpa"; : > "$TMP/bpp"
for i in $(seq "$ROUNDS"); do
	record_once packed
	# "  symbol pack: 23 binaries, 1129 symbols, 2982 addresses (8032 unnamed), 4 JIT entries; 0.44 s"
	read -r BIN SYM ADDR UNN JIT T < <(sed -nE 's/.*symbol pack: ([0-9]+) binaries, ([0-9]+) '\
'symbols, ([0-9]+) addresses \(([0-9]+) unnamed\), ([0-9]+) JIT entries; ([0-9.]+) s.*/'\
'\1 \2 \3 \4 \5 \6/p' "$TMP/packed.err")
	[ -n "${T:-}" ] || die "no symbol pack line in: $(cat "$TMP/packed.err")"
	echo "$T" >> "$TMP/t"
	record_once bare --no-pack
	"$STKREC" pack "$TMP/bare.cap" -o "$TMP/bare.packed.cap" 2>"$TMP/pack.err" ||
		die "stkrec pack failed: $(cat "$TMP/pack.err")"
	"$STKREC" info --json "$TMP/bare.packed.cap" > "$TMP/bare.json"
	A=$(stat -c %s "$TMP/bare.cap"); B=$(stat -c %s "$TMP/bare.packed.cap")
	DIST=$(jq '.pack.addresses + .pack.unnamed' "$TMP/bare.json")
	PADDR=$(jq '.pack.addresses' "$TMP/bare.json")
	BPA=$(awk -v a="$A" -v b="$B" -v n="$DIST" 'BEGIN {printf "%.1f", n ? (b - a) / n : 0}')
	BPP=$(awk -v a="$A" -v b="$B" -v n="$PADDR" 'BEGIN {printf "%.1f", n ? (b - a) / n : 0}')
	echo "$BPA" >> "$TMP/bpa"
	echo "$BPP" >> "$TMP/bpp"
	echo "  round $i: pack written in $T s ($BIN binaries, $SYM symbols, $ADDR addresses," \
		"$UNN unnamed, $JIT JIT entries); --no-pack + stkrec pack: +$((B - A)) bytes for" \
		"$DIST distinct user addresses = $BPA B/address ($BPP B per address packed)" |
		tee -a "$TABLE"
done
TM=$(median < "$TMP/t"); BM=$(median < "$TMP/bpa"); PM=$(median < "$TMP/bpp")
TARGET_T=$(awk -v s="$SECONDS_" 'BEGIN {print s / 10}')
row "7a time to write the pack at the end" "$TM s ($(verdict "$TM" "<=" "$TARGET_T"): at most $TARGET_T s)"
row "7b bytes the pack adds per user address" "$BM B ($(verdict "$BM" "<=" 64): at most 64)"
row "   ... per address it names (PACK_ADDR)" "$PM B"
row "   last round" "$BIN binaries, $SYM symbols, $ADDR addresses packed, $UNN unnamed, $JIT JIT entries"
jq -n --argjson seconds "$SECONDS_" --argjson rounds "$ROUNDS" --argjson t "$TM" \
	--argjson bpa "$BM" --argjson bpp "$PM" --argjson bin "$BIN" --argjson sym "$SYM" --argjson addr "$ADDR" \
	--argjson unn "$UNN" --argjson jit "$JIT" \
	'{seconds: $seconds, rounds: $rounds, write_s: $t, bytes_per_address: $bpa,
	  bytes_per_packed_address: $bpp,
	  last: {binaries: $bin, symbols: $sym, addresses: $addr, unnamed: $unn,
		 jit_entries: $jit}}' > "$JSON"
