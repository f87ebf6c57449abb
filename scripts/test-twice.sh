#!/usr/bin/env bash
# Runs the whole suite twice at the same time: here, and in a clone of this repository's HEAD in
# another folder (issue 14 item 8: the suite holds under load and two copies do not collide on
# ports, paths, network namespaces or the web build). Commit first: the clone gets HEAD, not the
# working tree. node_modules are copied, not installed, so no network is needed.
#
#   npm run test:twice                        # clone in a new temp folder, removed after
#   TWICE_DIR=/tmp/copy2 npm run test:twice   # clone there (kept, to look at afterwards)
#   TWICE_SAME=1 npm run test:twice           # both copies in this folder (shared web/dist, test-output)
#
# Each copy's output goes to test-output/twice/{here,clone}.log, the load average every 30 s to
# test-output/twice/load.log. Exits non-zero when either copy fails. Needs 2× the time and CPU of
# `npm test`; not part of CI.
set -uo pipefail
cd "$(dirname "$0")/.."
here=$(pwd)
out="$here/test-output/twice"
mkdir -p "$out"

keep=1
clone="${TWICE_DIR:-}"
if [ -n "${TWICE_SAME:-}" ]; then
  clone="$here"
else
  if [ -z "$clone" ]; then
    clone=$(mktemp -d "${TMPDIR:-/tmp}/maestro-twice-XXXXXX")
    keep=0
  fi
  if [ -e "$clone/.git" ]; then
    echo "twice: $clone already holds a clone; remove it or pick another TWICE_DIR" >&2
    exit 2
  fi
  git clone -q "$here" "$clone" || exit 2
  cp -a "$here/node_modules" "$clone/" && cp -a "$here/web/node_modules" "$clone/web/" || exit 2
fi

( while sleep 30; do echo "$(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)"; done ) >"$out/load.log" &
sampler=$!

start=$(date +%s)
( cd "$here" && npm test >"$out/here.log" 2>&1; echo $? >"$out/here.rc" ) &
a=$!
( cd "$clone" && npm test >"$out/clone.log" 2>&1; echo $? >"$out/clone.rc" ) &
b=$!
wait "$a" "$b"
end=$(date +%s)
kill "$sampler" 2>/dev/null

status=0
for name in here clone; do
  rc=$(cat "$out/$name.rc")
  # Vitest colours its summary even into a file: strip the escapes before reading it.
  echo "twice: $name exit $rc; $(sed 's/\x1b\[[0-9;]*m//g' "$out/$name.log" | grep -E '^ +(Test Files|Tests|Duration) ' | tr -s ' ' | tr '\n' ';')"
  [ "$rc" = 0 ] || status=1
done
echo "twice: both copies took $((end - start)) s; load average samples in $out/load.log"
[ "$keep" = 1 ] || rm -rf "$clone"
exit "$status"
