#!/usr/bin/env bash
# build_prev.sh [OUTDIR]: builds the papo binary of the previous release
# (the commit tests/compat/PREVIOUS names) into OUTDIR/HASH/papo and
# prints its path; the compat tests run it beside this tree's binary.
# OUTDIR defaults to build/prev; ctest passes ${CMAKE_BINARY_DIR}/prev.
#
# The release's files come from this clone's history (git archive), so a
# shallow clone that lacks the commit fails here, saying how to fetch it.
# A binary built once is reused; several callers at once wait for one
# build (flock on OUTDIR/.lock).  Only the papo target is built
# (RelWithDebInfo, no sanitizers, no -Werror: an old tree may warn under a
# newer compiler), and its output goes to OUTDIR/HASH.log, which a
# failure shows the end of.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(git -C "$here" rev-parse --show-toplevel 2>/dev/null) || {
	echo "build_prev.sh: $here is not in a git clone: the previous release is built from the clone's history" >&2
	exit 1
}
rev=$(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$here/PREVIOUS" | grep -v '^$' | head -1)
if ! [[ $rev =~ ^[0-9a-f]{40}$ ]]; then
	echo "build_prev.sh: $here/PREVIOUS must hold one full commit hash (40 hex digits), not '$rev'" >&2
	exit 1
fi
out=${1:-$src/build/prev}
mkdir -p "$out"
out=$(cd "$out" && pwd)
bin=$out/$rev/papo

if [ -x "$bin" ]; then
	echo "$bin"
	exit 0
fi
# A shallow clone fetches the history it lacks, when its origin answers.
if ! git -C "$src" cat-file -e "$rev^{commit}" 2>/dev/null &&
	[ "$(git -C "$src" rev-parse --is-shallow-repository)" = true ]; then
	timeout 120 git -C "$src" fetch -q --unshallow >/dev/null 2>&1 || true
fi
if ! git -C "$src" cat-file -e "$rev^{commit}" 2>/dev/null; then
	if [ "$(git -C "$src" rev-parse --is-shallow-repository)" = true ]; then
		echo "build_prev.sh: this clone is shallow and lacks the previous release, $rev (tests/compat/PREVIOUS), which the compat tests build and run: fetch the history with 'git -C $src fetch --unshallow' (or at least 'git fetch --depth=N' deep enough to hold it)" >&2
	else
		echo "build_prev.sh: this clone lacks the previous release, $rev (tests/compat/PREVIOUS): fetch it ('git -C $src fetch origin'), or correct PREVIOUS" >&2
	fi
	exit 1
fi

exec 9>"$out/.lock"
flock 9
# Another caller may have built it while this one waited.
if [ -x "$bin" ]; then
	echo "$bin"
	exit 0
fi

log=$out/$rev.log
tmp=$(mktemp -d "$out/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/src"
start=$(date +%s)
if ! {
	git -C "$src" archive "$rev" | tar -x -C "$tmp/src" &&
	env -u CI -u CFLAGS -u LDFLAGS cmake -S "$tmp/src" -B "$tmp/build" \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo -DPAPO_SANITIZE=OFF -DPAPO_FUZZ=OFF &&
	cmake --build "$tmp/build" --target papo -j"$(nproc)"
} >"$log" 2>&1; then
	echo "build_prev.sh: building the previous release ($rev) failed; the end of $log:" >&2
	tail -20 "$log" >&2
	exit 1
fi
mkdir -p "$out/$rev"
cp "$tmp/build/papo" "$bin.tmp"
mv "$bin.tmp" "$bin"
echo "build_prev.sh: built the previous release ($rev) in $(( $(date +%s) - start )) s" >>"$log"
echo "build_prev.sh: built the previous release ($rev) in $(( $(date +%s) - start )) s" >&2
echo "$bin"
