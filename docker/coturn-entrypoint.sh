#!/bin/sh
# coturn-entrypoint.sh: how the coturn image of docker/coturn.Dockerfile
# starts (installed as /usr/local/bin/coturn-entrypoint.sh).  It runs
# turnserver with docker/turnserver.conf and what the environment adds:
#
#   TURN_SECRET            the REST shared secret the members have as
#                          PAPO_TURN_SECRET (required: 16 to 256 visible
#                          ASCII characters)
#   TURN_EXTERNAL_IP       PUBLIC or PUBLIC/PRIVATE, for a host behind a
#                          1:1 NAT (optional)
#   TURN_ALLOWED_PEER_IP   IP or IP-IP, a range the relay may reach after
#                          all (optional; a trial on a private network)
#
# The secret goes into a copy of the config in a directory only this user
# reads, not onto turnserver's command line, where every user of the host
# could read it (ps).  Arguments are passed to turnserver after -c.
set -eu

conf=${TURN_CONF:-/etc/coturn/turnserver.conf}
run=${TURN_RUNDIR:-/tmp/coturn}

die() {
	echo "coturn-entrypoint: $*" >&2
	exit 64
}

secret=${TURN_SECRET:-}
[ -n "$secret" ] || die "set TURN_SECRET, the secret members have as PAPO_TURN_SECRET (docker/README.md)"
case $secret in
*[!!-~]*) die "TURN_SECRET must be visible ASCII characters only (no spaces)" ;;
esac
[ ${#secret} -ge 16 ] || die "TURN_SECRET is too short (${#secret} characters; at least 16)"
[ ${#secret} -le 256 ] || die "TURN_SECRET is too long (${#secret} characters; at most 256)"
# address NAME VALUE: VALUE is empty, an address or a range (digits,
# hex, dots, colons, a slash or a dash), nothing a config line could
# carry more in.
address() {
	case $2 in
	*[!0-9a-fA-F.:/-]*) die "$1 is not an address: '$2'" ;;
	esac
}
address TURN_EXTERNAL_IP "${TURN_EXTERNAL_IP:-}"
address TURN_ALLOWED_PEER_IP "${TURN_ALLOWED_PEER_IP:-}"
[ -r "$conf" ] || die "cannot read $conf"

umask 077
mkdir -p "$run"
{
	cat "$conf"
	echo "static-auth-secret=$secret"
	[ -z "${TURN_EXTERNAL_IP:-}" ] || echo "external-ip=$TURN_EXTERNAL_IP"
	[ -z "${TURN_ALLOWED_PEER_IP:-}" ] || echo "allowed-peer-ip=$TURN_ALLOWED_PEER_IP"
} >"$run/turnserver.conf"
unset TURN_SECRET secret

# No pid file (as Debian's systemd unit); the SQLite user database, which
# use-auth-secret does not use but coturn opens, in the run directory.
exec turnserver -c "$run/turnserver.conf" --pidfile= --userdb "$run/turndb" "$@"
