#!/usr/bin/env bash
# Fetches the containerd lines k3s really bundles (1.7 and 2.x) for lab nodes, from Debian's own
# newer suites (trixie: 1.7.x, sid: 2.x), without touching this machine's apt state: a private
# sources list naming the same archive URI as the machine's own Debian entry, private lists and
# cache dirs, `apt-get download`, `dpkg-deb -x`. Only usr/bin/containerd and usr/bin/ctr are kept.
#
#   scripts/lab-containerd.sh [LINE...]      LINE: 1.7 | 2   (default: both)
#
# Result: $HOLDFAST_CONTAINERD_CACHE/<line>/{containerd,ctr,VERSION}
#         (default /var/cache/holdfast-lab/containerd, outside the checkout). Idempotent: a line
#         already there is kept. Debian 12's own containerd (1.6) is the apt package itself.
set -euo pipefail

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

# The archive URI of the machine's own Debian entry (deb822 or one-line format).
debian_uri() {
  local uri=""
  if compgen -G '/etc/apt/sources.list.d/*.sources' >/dev/null; then
    uri=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' /etc/apt/sources.list.d/*.sources)
  fi
  if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
    uri=$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' /etc/apt/sources.list)
  fi
  [ -n "$uri" ] || { echo "lab-containerd: no Debian archive URI found in /etc/apt/sources.list(.d)" >&2; exit 1; }
  echo "$uri"
}

for line in "${lines[@]}"; do
  suite=$(suite_of "$line")
  dest="$cache/$line"
  if [ -x "$dest/containerd" ] && [ -x "$dest/ctr" ] && [ -s "$dest/VERSION" ]; then
    echo "containerd $line: $(cat "$dest/VERSION") (cached in $dest)"
    continue
  fi
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  mkdir -p "$work/parts" "$work/lists/partial" "$work/cache/archives/partial" "$work/deb"
  printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$(debian_uri)" "$suite" >"$work/parts/holdfast-lab.sources"
  apt_opts=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$work/parts"
    -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o "APT::Sandbox::User=root")
  apt-get "${apt_opts[@]}" update -qq
  (cd "$work/deb" && apt-get "${apt_opts[@]}" download -qq containerd)
  deb=$(ls "$work"/deb/containerd_*.deb)
  dpkg-deb -x "$deb" "$work/x"
  mkdir -p "$dest.tmp"
  install -m 0755 "$work/x/usr/bin/containerd" "$work/x/usr/bin/ctr" "$dest.tmp/"
  "$dest.tmp/containerd" --version | awk '{ print $3 }' >"$dest.tmp/VERSION"
  rm -rf "$dest"
  mv "$dest.tmp" "$dest"
  rm -rf "$work"
  trap - EXIT
  echo "containerd $line: $(cat "$dest/VERSION") (from Debian $suite, in $dest)"
done
