#!/usr/bin/env bash
# Fetches the containerd lines k3s really bundles (1.7 and 2.x) for lab nodes, from Debian's own
# newer suites (trixie: 1.7.x, sid: 2.x), without touching this machine's apt state (see
# scripts/debian-fetch.sh). Only usr/bin/containerd and usr/bin/ctr are kept.
#
#   scripts/lab-containerd.sh [LINE...]      LINE: 1.7 | 2   (default: both)
#
# Result: $HOLDFAST_CONTAINERD_CACHE/<line>/{containerd,ctr,VERSION}
#         (default /var/cache/holdfast-lab/containerd, outside the checkout). Idempotent: a line
#         already there is kept. Debian 12's own containerd (1.6) is the apt package itself.
set -euo pipefail
. "$(dirname "$0")/debian-fetch.sh"

cache="${HOLDFAST_CONTAINERD_CACHE:-/var/cache/holdfast-lab/containerd}"
lines=("$@")
[ ${#lines[@]} -eq 0 ] && lines=(1.7 2)

suite_of() {
  case "$1" in
    1.7) echo trixie ;;
    2) echo sid ;;
    *) echo "lab-containerd: unknown line '$1' (use 1.7 or 2)" >&2; exit 2 ;;
  esac
}

for line in "${lines[@]}"; do
  suite=$(suite_of "$line")
  dest="$cache/$line"
  if debian_fetched "$dest" containerd ctr; then
    echo "containerd $line: $(cat "$dest/VERSION") (cached in $dest)"
    continue
  fi
  debian_fetch "$suite" containerd "$dest" containerd ctr
  # VERSION is what the binary reports (e.g. 2.1.9+unknown), as lab/containerd.ts shows it.
  "$dest/containerd" --version | awk '{ print $3 }' >"$dest/VERSION"
  echo "containerd $line: $(cat "$dest/VERSION") (from Debian $suite, in $dest)"
done
