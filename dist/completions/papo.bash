# bash completion for papo(1): commands, each command's options, and the
# values papo knows (setup's clients, --tls's words, files for --file and
# -o).  Installed as share/bash-completion/completions/papo, which
# bash-completion loads the first time papo is completed; it stands on
# bash alone.  tests/install/tree.sh checks it against `papo --help`.

_papo_commands="new join rooms leave rename invite serve mcp hook say get status
history tail admin rotate remove tokens setup doctor version help"

# A command's options, as its usage in `papo COMMAND --help` has them
# (printf: echo would take -n for its own).
_papo_options() {
	case $1 in
	new)     printf '%s ' --name --about --room --force ;;
	join)    printf '%s ' --name --about --force ;;
	rooms)   printf '%s ' --json ;;
	leave)   printf '%s ' --delete --json ;;
	rename)  printf '%s ' --room --json ;;
	invite)  printf '%s ' --room --listen ;;
	serve)   printf '%s ' --http --listen --advertise --turn --token \
	             --tls --name --about --room ;;
	mcp)     printf '%s ' --channels --agent --room --new-room ;;
	hook)    printf '%s ' --agent ;;
	say)     printf '%s ' --file --name --to --public --reply-to --room --json ;;
	get)     printf '%s ' -o --output --force --wait --room ;;
	status)  printf '%s ' --room --json ;;
	history) printf '%s ' -n -q --query --from --since --before --after \
	             --thread --files --room --all-rooms --json ;;
	tail)    printf '%s ' -n --room --all-rooms --json ;;
	admin)   printf '%s ' --room --json ;;
	rotate)  printf '%s ' --room --json ;;
	remove)  printf '%s ' --room --json ;;
	tokens)  printf '%s ' --json ;;
	setup)   printf '%s ' --print --remove --http --accept-inbound ;;
	esac
	printf '%s\n' --help
}

# The names the running daemon knows, from `papo rooms --json` (its
# rooms) or `papo status --json` (the default room's members, this one
# too); nothing when no daemon runs.
_papo_names() {
	papo "$1" --json 2>/dev/null | grep -o '"name":"[^"\\]*"' |
	    cut -d'"' -f4
}

_papo() {
	local cur=${COMP_WORDS[COMP_CWORD]}
	local prev=${COMP_WORDS[COMP_CWORD-1]}
	local cmd=${COMP_WORDS[1]}

	COMPREPLY=()
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$_papo_commands --help --version" \
		    -- "$cur"))
		return
	fi
	case $prev in
	--file|-o|--output)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	--tls)
		COMPREPLY=($(compgen -W "self off" -- "$cur"))
		return ;;
	--room)
		COMPREPLY=($(compgen -W "$(_papo_names rooms)" -- "$cur"))
		return ;;
	--to|--from)
		COMPREPLY=($(compgen -W "$(_papo_names status)" -- "$cur"))
		return ;;
	--name|--about|--listen|--http|--advertise|--turn|--token|\
	--reply-to|--agent|-n|-q|--query|--since|--before|\
	--after|--thread)
		return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_papo_options "$cmd")" -- "$cur"))
		return
	fi
	if [ "$COMP_CWORD" -eq 2 ]; then
		case $cmd in
		setup)
			COMPREPLY=($(compgen -W "claude-code codex gemini qwen \
			    copilot opencode cursor vscode" -- "$cur")) ;;
		hook)
			COMPREPLY=($(compgen -W "claude-code codex gemini qwen \
			    copilot opencode" -- "$cur")) ;;
		rooms)  COMPREPLY=($(compgen -W "default" -- "$cur")) ;;
		leave)  COMPREPLY=($(compgen -W "$(_papo_names rooms)" -- "$cur")) ;;
		admin|remove)
			COMPREPLY=($(compgen -W "$(_papo_names status)" -- "$cur")) ;;
		tokens) COMPREPLY=($(compgen -W "revoke" -- "$cur")) ;;
		say)    COMPREPLY=($(compgen -W "-" -- "$cur")) ;;
		esac
	fi
}
complete -F _papo papo
