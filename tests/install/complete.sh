#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tests/install/complete.sh FILE WORD...: source the bash completion FILE
# and complete the command line WORD... (its last word the one being
# typed, --opt=VALUE given as bash splits it: --opt = VALUE) as bash does
# on TAB: print COMPREPLY, one a line.
# tests/install/complete.sh FILE --spec: print `complete -p stkrec`.
source "$1" || exit 1
shift
if [[ $1 == --spec ]]; then
	complete -p stkrec
	exit
fi
COMP_WORDS=("$@")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMP_LINE="$*"
COMP_POINT=${#COMP_LINE}
_stkrec
((${#COMPREPLY[@]} == 0)) || printf '%s\n' "${COMPREPLY[@]}"
