#!/usr/bin/env bash
# Fetches Debian's own kubectl (package kubernetes-client, this machine's suite) for the lab's
# in-cluster test, without touching this machine's apt state (see scripts/debian-fetch.sh): a
# machine may already have another package's /usr/bin/kubectl, which dpkg would refuse to overwrite.
#
#   scripts/lab-kubectl.sh
#
# Result: $HOLDFAST_KUBECTL_CACHE/{kubectl,VERSION} (default /var/cache/holdfast-lab/kubectl). Idempotent.
set -euo pipefail
. "$(dirname "$0")/debian-fetch.sh"

dest="${HOLDFAST_KUBECTL_CACHE:-/var/cache/holdfast-lab/kubectl}"
suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
if debian_fetched "$dest" kubectl; then
  echo "kubectl: $(cat "$dest/VERSION") (cached in $dest)"
  exit 0
fi
debian_fetch "$suite" kubernetes-client "$dest" kubectl || { echo "lab-kubectl: fetching kubernetes-client from Debian $suite failed" >&2; exit 1; }
echo "kubectl: $(cat "$dest/VERSION") (from Debian $suite, in $dest)"
