#!/usr/bin/env bash
# Fetches the signing tools the signature tests drive, cosign 3.x and oras, from Debian sid,
# without touching this machine's apt state (see scripts/debian-fetch.sh). Only the binaries are
# kept. Debian 12 has neither; the registry they push to is bookworm's docker-registry (apt).
#
#   scripts/lab-signing-tools.sh
#
# Result: $HOLDFAST_SIGNING_CACHE/{cosign,oras}/{<binary>,VERSION}
#         (default /var/cache/holdfast-lab/signing, outside the checkout). Idempotent.
set -euo pipefail
. "$(dirname "$0")/debian-fetch.sh"

cache="${HOLDFAST_SIGNING_CACHE:-/var/cache/holdfast-lab/signing}"

for tool in cosign oras; do
  dest="$cache/$tool"
  if debian_fetched "$dest" "$tool"; then
    echo "$tool: $(cat "$dest/VERSION") (cached in $dest)"
    continue
  fi
  debian_fetch sid "$tool" "$dest" "$tool" || { echo "lab-signing-tools: fetching $tool from Debian sid failed" >&2; exit 1; }
  echo "$tool: $(cat "$dest/VERSION") (from Debian sid, in $dest)"
done
