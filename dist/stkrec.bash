
# bash completion for stkrec; the tables above come from the -h texts
# (dist/completion.sh).

# COMPREPLY: the words of $1 that start with $2, one a line.
_stkrec_words()
{
	mapfile -t COMPREPLY < <(compgen -W "$1" -- "$2")
}

# COMPREPLY: files (dir=1: directories) that start with $1.
_stkrec_files()
{
	compopt -o filenames 2>/dev/null
	if (($2)); then
		mapfile -t COMPREPLY < <(compgen -d -- "$1")
	else
		mapfile -t COMPREPLY < <(compgen -f -- "$1")
	fi
}

# COMPREPLY: $1 completed as a comma-separated list of words from $2, each
# once: offcpu,c -> offcpu,cpu.
_stkrec_list()
{
	local head= last=$1 w
	if [[ $1 == *,* ]]; then
		head=${1%,*},
		last=${1##*,}
	fi
	COMPREPLY=()
	for w in $2; do
		[[ $w == "$last"* && ,$head != *,$w,* ]] && COMPREPLY+=("$head$w")
	done
}

# The argument of option $2 of command $1, being typed as $3. Returns 1
# when $2 takes none.
_stkrec_arg()
{
	local args=_stkrec_args_$1 kinds=_stkrec_kinds_$1 cls
	[[ ${!args} == *" $2="* ]] || return 1
	cls=${!args#*" $2="}
	cls=${cls%% *}
	case $cls in
	file) _stkrec_files "$3" 0 ;;
	dir) _stkrec_files "$3" 1 ;;
	kinds) _stkrec_words "${!kinds}" "$3" ;;
	kinds,) _stkrec_list "$3" "${!kinds}" ;;
	keys,) _stkrec_list "$3" "$_stkrec_sort_keys" ;;
	choice:*)
		cls=${cls#choice:}
		_stkrec_words "${cls//|/ }" "$3"
		;;
	*) COMPREPLY=() ;;
	esac
	return 0
}

_stkrec()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local cmd=${COMP_WORDS[1]} opts files i

	COMPREPLY=()
	if ((COMP_CWORD == 1)); then
		_stkrec_words "$_stkrec_commands --help --version" "$cur"
		return
	fi
	[[ " $_stkrec_commands " == *" $cmd "* ]] || return
	# record -- COMMAND ARGS: a command, then its files.
	for ((i = 2; i < COMP_CWORD; i++)); do
		[[ ${COMP_WORDS[i]} == -- ]] || continue
		if ((i + 1 == COMP_CWORD)); then
			mapfile -t COMPREPLY < <(compgen -c -- "$cur" | sort -u)
		else
			_stkrec_files "$cur" 0
		fi
		return
	done
	# --opt=VALUE: bash splits it into --opt, =, VALUE.
	if [[ $cur == = ]]; then
		prev=${COMP_WORDS[COMP_CWORD - 1]}
		cur=
	elif [[ $prev == = ]]; then
		prev=${COMP_WORDS[COMP_CWORD - 2]}
	fi
	_stkrec_arg "$cmd" "$prev" "$cur" && return
	opts=_stkrec_opts_$cmd
	files=_stkrec_files_$cmd
	if [[ $cur == -* ]]; then
		_stkrec_words "${!opts}" "$cur"
	elif ((${!files})); then
		_stkrec_files "$cur" 0
	fi
}

complete -F _stkrec stkrec
