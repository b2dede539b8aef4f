#!/usr/bin/env zsh
# zsh_complete.zsh DIR LINE: what zsh offers when TAB is pressed at the
# end of LINE in an interactive zsh (on a pty, zsh/zpty) whose fpath
# starts with DIR: the words each compadd adds, one a line (tree.sh runs
# it against the installed _papo).  compadd is wrapped to print what it
# adds; the line that ends it is printed when completion ends
# (comppostfuncs), so nothing waits on a guessed time.  Gives up after
# 10 s.
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PS1=''; RPS1=''"
zpty -w z "fpath=(${(q)1} \$fpath); autoload -U compinit; compinit -u -D"
# Every word a completion function adds, printed as it adds it; when
# completion ends (comppostfuncs), a line saying so.
zpty -w z '_zc_done() { print -rl -- "" "<<DONE" >/dev/tty; }'
zpty -w z 'compadd() { local -a h; local a; comppostfuncs=(_zc_done); for a; do [[ $a == -[OAD]* ]] && { builtin compadd "$@"; return; }; [[ $a == - || $a == -- ]] && break; done; builtin compadd -A h "$@"; (( $#h )) && print -rl -- "" "<<"${^h} >/dev/tty; builtin compadd "$@"; }'
zpty -w -n z "$2"$'\t'
out=
for i in {1..200}; do
	while zpty -r -t z chunk; do out+=$chunk; done
	[[ $out == *$'\n<<DONE'* ]] && break
	sleep 0.05
done
zpty -d z
print -r -- "$out" | tr -d '\r' | sed -n 's/^<<\(.*\)$/\1/p' | grep -vx DONE | sort -u
