#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The man pages, from the -h text alone, so that they cannot drift from it.
#
#   dist/man.sh STKREC DIR    write DIR/stkrec.1 and DIR/stkrec-CMD.1 for
#                             each command of `stkrec -h`
#
# help2man does the work; it runs this script again for the text it reads:
#   dist/man.sh --help-of STKREC CMD      `stkrec CMD -h`, made to read as
#                                         help2man expects (below)
#   dist/man.sh --version-of STKREC CMD   `stkrec-CMD (stkrec) VERSION`
# The page's NAME line is the command's line in `stkrec -h` (stkrec(1): the
# first sentence of its description); SEE ALSO names every command's page,
# from the same list.
set -e

commands() {
	"$1" -h | awk '/^Commands:/ { on = 1; next } on && !NF { exit } on { print }'
}

# The first sentence of `stkrec -h`'s description, up to its ';'.
tagline() {
	"$1" -h | awk 'NR > 1 && NF { s = s (s ? " " : "") $0 } NR > 1 && !NF && s { exit }
		END { sub(/[;.].*/, "", s); print s }'
}

# -h as help2man reads it: "Usage:" with the synopsis on one line (it takes
# only the first line), the sections it knows capitalized, and each example
# a "$ " command line (which it keeps verbatim, one a line).
help_of() {
	"$1" ${2#-} -h | awk '
		NR == 1 { sub(/^usage:/, "Usage:"); line = $0; next }
		!done && /^ +\[/ { sub(/^ +/, " "); line = line $0; next }
		!done { print line; done = 1 }
		/^[Oo]ptions:$/ { print "Options:"; next }
		/^[Ee]xamples:$/ { print "Examples:"; ex = 1; next }
		ex && /^ +[^ ]/ { sub(/^ +/, "  $ ") }
		{ print }'
}

version_of() {
	v=$("$1" --version)
	case $2 in
	-) echo "$v" ;;
	*) echo "stkrec-$2 (stkrec) ${v#stkrec }" ;;
	esac
}

# No hyphenation, ragged right: a line never breaks inside an option
# (--wak-/ers); nor in the SYNOPSIS, whose hyphens help2man leaves
# breakable. The examples as -h shows them, unfilled.
postprocess() {
	awk '
		/^\.TH / { print; print ".nh"; print ".ad l"; next }
		/^\.SH / { if (sect == "EXAMPLES") print ".fi"; sect = $2; print; next }
		sect == "SYNOPSIS" { gsub(/-/, "\\\\-") }
		sect == "EXAMPLES" && /^\.IP$/ { print ".PP"; print ".nf"; next }
		sect == "EXAMPLES" && /^\.br$/ { next }
		{ print }
		END { if (sect == "EXAMPLES") print ".fi" }'
}

page() {
	stkrec=$1 cmd=$2 out=$3
	inc=$out.h2m
	if [ "$cmd" = - ]; then
		name=$(tagline "$stkrec")
	else
		name=$(commands "$stkrec" | awk -v c="$cmd" '$1 == c { $1 = ""; sub(/^ /, ""); print }')
		[ -n "$name" ] || { echo "man.sh: '$cmd' is not in '$stkrec -h'" >&2; exit 1; }
	fi
	{
		echo "[SEE ALSO]"
		[ "$cmd" = - ] || echo ".BR stkrec (1),"
		commands "$stkrec" | awk -v c="$cmd" '$1 != c { printf "%s.BR stkrec\\-%s (1)", sep, $1; sep = ",\n" }
			END { print "" }'
	} >"$inc"
	help2man --no-info --section=1 --manual="stkrec Manual" --name="$name" --include="$inc" \
		--help-option="--help-of '$stkrec' $cmd" --version-option="--version-of '$stkrec' $cmd" \
		--output="$out.tmp" "$0"
	rm -f "$inc"
	postprocess <"$out.tmp" >"$out"
	rm -f "$out.tmp"
}

all() {
	page "$1" - "$2/stkrec.1"
	for c in $(commands "$1" | awk '{ print $1 }'); do
		page "$1" "$c" "$2/stkrec-$c.1"
	done
}

case $1 in
--help-of) help_of "$2" "$3" ;;
--version-of) version_of "$2" "$3" ;;
*) all "$@" ;;
esac
