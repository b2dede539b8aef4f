#!/bin/sh
# entrypoint.sh: how the papo image starts (installed as
# /usr/local/bin/docker-entrypoint.sh; docker/README.md tells the whole
# story).  The arguments of the container decide what runs:
#
#   (none), or options only   papo serve [OPTIONS]: the daemon
#   --version, --help, -h     papo --version, papo --help
#   serve ..., new ..., ...   papo serve ..., papo new ...: any command
#                             papo itself knows (papo NAME --help
#                             answers 0), so a new one needs no change
#                             here
#   papo ...                  that command
#   healthcheck               the image's HEALTHCHECK: GET /healthz
#   anything else             run as is (sh, for a look inside)
#
# For the daemon it adds only what a container needs on top of what
# 'papo serve' already does itself (it reads PAPO_HOME, PAPO_NAME,
# PAPO_ABOUT, PAPO_INVITE, PAPO_HTTP, PAPO_LISTEN, PAPO_TOKEN and
# PAPO_LOG, joins PAPO_INVITE when the home has no room yet, and warns
# when a later PAPO_INVITE names another room than the one it keeps):
# HTTP and QUIC on every interface by default.  Then it execs papo, which
# so becomes the container's main process and gets its SIGTERM.
set -eu

# Whether papo has a command NAME: it answers 'papo NAME --help' with 0,
# and an unknown one with 2 (cli.c).  Asked of papo itself, the list
# cannot fall behind its commands.
papo_command() {
	case $1 in
	"" | */* | -*) return 1 ;;
	esac
	papo "$1" --help >/dev/null 2>&1
}

# The home papo uses: $PAPO_HOME, else ~/.papo (as papo decides it).
papo_home() {
	if [ -n "${PAPO_HOME:-}" ]; then
		printf '%s\n' "$PAPO_HOME"
	elif [ -n "${HOME:-}" ]; then
		printf '%s/.papo\n' "$HOME"
	fi
}

# json_str FILE KEY: the string value of a top-level KEY in a JSON file
# that papo wrote (one key a line, as cJSON prints it); empty when the
# file or key is missing or unreadable.
json_str() {
	sed -n "s/^[[:space:]]*\"$2\":[[:space:]]*\"\\([^\"]*\\)\".*/\\1/p" \
	    "$1" 2>/dev/null | head -n 1 || :
}

# GET /healthz of the daemon whose serve.json is in the home, over the
# address it wrote there (so it follows PAPO_HTTP, --http and port 0).
# The image has no curl: bash, which every Debian system has, opens the
# connection.  /healthz needs no token.
healthcheck() {
	home=$(papo_home)
	hostport=
	[ -z "$home" ] || hostport=$(json_str "$home/serve.json" http)
	hostport=${hostport#http://}
	if [ -z "$hostport" ]; then
		echo "papo: no papo serve is running on ${home:-the home}" >&2
		exit 1
	fi
	host=${hostport%:*}
	host=${host#[}
	host=${host%]}
	exec bash -c '
		exec 3<>"/dev/tcp/$1/$2" || exit 1
		printf "GET /healthz HTTP/1.0\r\nHost: %s\r\n\r\n" "$3" >&3
		IFS= read -r -t 10 line <&3 || { echo "papo: no answer" >&2; exit 1; }
		line=${line//[[:cntrl:]]/}
		case $line in
		"HTTP/1."?" 200 "*) echo "$line"; exit 0 ;;
		esac
		echo "papo: /healthz answered $line" >&2
		exit 1' healthcheck "$host" "${hostport##*:}" "$hostport"
}

# Which command the arguments name (the table at the top).
if [ $# -eq 0 ]; then
	set -- papo serve
else
	case $1 in
	--version | --help | -h)
		set -- papo "$@" ;;
	-*)
		set -- papo serve "$@" ;;
	healthcheck)
		healthcheck ;;
	papo)
		;;
	*)
		if papo_command "$1"; then
			set -- papo "$@"
		fi ;;
	esac
fi

if [ "$1" = papo ] && [ "${2:-}" = serve ]; then
	# In a container the agent reaches HTTP over the container network,
	# and the other members reach QUIC on it.  There is no check here
	# that a non-loopback HTTP address has PAPO_TOKEN: papo serve makes
	# it first, before it touches the home or binds anything, and says
	# in one line to set PAPO_TOKEN; a second copy of its rule here
	# (which addresses are loopback) could only drift from it.
	: "${PAPO_HTTP:=0.0.0.0:7777}" "${PAPO_LISTEN:=0.0.0.0:7778}"
	export PAPO_HTTP PAPO_LISTEN
fi

exec "$@"
