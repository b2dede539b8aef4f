#!/usr/bin/env bash
# tests/tools/bookworm-root.sh: prints the path of a tarball holding a
# fresh Debian 12 (bookworm) root, as `debootstrap --variant=minbase`
# makes it from the Debian archive this machine's apt uses, made once and
# kept in a cache directory for the tests that need a clean Debian:
# tests/install/deb.sh unpacks it and installs the package in it (a
# chroot); the container test imports it into podman as the image's base.
#
#   usage: bookworm-root.sh
#   PAPO_TEST_CACHE    the cache directory (default /var/cache/papo-tests)
#   PAPO_DEBIAN_MIRROR the archive (default: the one in /etc/apt/sources.list*,
#                      else http://deb.debian.org/debian)
#
# The tarball (bookworm-minbase.tar) is the root's contents with numeric
# owners (`tar -C DIR -xpf` as root gives the root back); its apt sources
# name bookworm, bookworm-updates and bookworm-security, as Debian's own
# images do, and it holds no package lists (run apt-get update).  It is
# made again when older than 30 days, so the packages it starts with do
# not fall far behind the archive's.  Tests running side by side share
# it: a lock (flock on the cache's bookworm.lock) lets one make it while
# the others wait, and a tarball is only ever renamed into place whole.
# Needs root and debootstrap; says so and exits 1 without them.
set -euo pipefail

cache=${PAPO_TEST_CACHE:-/var/cache/papo-tests}
tarball=$cache/bookworm-minbase.tar
max_age_days=30

if [ "$(id -u)" -ne 0 ]; then
	echo "bookworm-root.sh: debootstrap needs root" >&2
	exit 1
fi
if ! command -v debootstrap >/dev/null; then
	echo "bookworm-root.sh: debootstrap is not installed" \
	    "(apt-get install debootstrap; .ci/test-setup does)" >&2
	exit 1
fi

# The first URI of this machine's apt sources that is a Debian archive
# (a path ending in /debian: not debian-security, not a third party's).
mirror() {
	local uri

	if [ -n "${PAPO_DEBIAN_MIRROR:-}" ]; then
		echo "$PAPO_DEBIAN_MIRROR"
		return
	fi
	uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
	    /etc/apt/sources.list.d/*.sources 2>/dev/null |
	    grep -E '^[[:space:]]*(deb[[:space:]]|URIs:)' |
	    grep -oE 'https?://[^[:space:]]+' |
	    grep -E '/debian/?$' | head -n 1 || true)
	echo "${uri:-http://deb.debian.org/debian}"
}

# Likewise the security archive, else Debian's.
security() {
	local uri

	uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
	    /etc/apt/sources.list.d/*.sources 2>/dev/null |
	    grep -oE 'https?://[^[:space:]]+/debian-security/?' |
	    head -n 1 || true)
	echo "${uri:-http://deb.debian.org/debian-security}"
}

mkdir -p "$cache"
chmod 755 "$cache"
exec 9>"$cache/bookworm.lock"
flock 9

if [ -s "$tarball" ] &&
    [ -z "$(find "$tarball" -mtime +"$max_age_days" 2>/dev/null)" ]; then
	echo "$tarball"
	exit 0
fi

work=$(mktemp -d "$cache/bookworm.XXXXXX")
# debootstrap leaves nothing mounted when it ends (minbase, no chroot
# left running); --one-file-system keeps rm inside the work directory
# should something be.
trap 'rm -rf --one-file-system "$work"' EXIT
m=$(mirror)
s=$(security)
start=$(date +%s)
if ! debootstrap --variant=minbase bookworm "$work/root" "$m" \
    >"$work/debootstrap.log" 2>&1; then
	tail -n 20 "$work/debootstrap.log" >&2
	echo "bookworm-root.sh: debootstrap from $m failed" >&2
	exit 1
fi
m=${m%/}
s=${s%/}
cat >"$work/root/etc/apt/sources.list" <<EOF
deb $m bookworm main
deb $m bookworm-updates main
deb $s bookworm-security main
EOF
rm -rf "$work/root/var/cache/apt/archives/"*.deb \
    "$work/root/var/lib/apt/lists/"* "$work/root/etc/resolv.conf"
tar -C "$work/root" --numeric-owner -cf "$work/root.tar" .
mv "$work/root.tar" "$tarball"
echo "bookworm-root.sh: made $tarball from $m in" \
    "$(($(date +%s) - start)) s" >&2
echo "$tarball"
