#!/usr/bin/env bash
# Fetches binaries from one Debian package of a newer suite (trixie, sid) without touching this
# machine's apt state: a private sources list naming the same archive URI as the machine's own
# Debian entry, private lists and cache dirs, `apt-get download`, `dpkg-deb -x`. Only the named
# usr/bin binaries are kept, in DEST, with the package's version in DEST/VERSION. Idempotent: a
# DEST already holding every binary and a VERSION is kept. Sourced by the lab's fetch scripts.
#
#   debian_fetch SUITE PACKAGE DEST BIN...

# The archive URI of the machine's own Debian entry (deb822 or one-line format).
debian_uri() {
  local uri=""
  if compgen -G '/etc/apt/sources.list.d/*.sources' >/dev/null; then
    uri=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' /etc/apt/sources.list.d/*.sources)
  fi
  if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
    uri=$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' /etc/apt/sources.list)
  fi
  [ -n "$uri" ] || { echo "debian-fetch: no Debian archive URI found in /etc/apt/sources.list(.d)" >&2; return 1; }
  echo "$uri"
}

# True when DEST holds every BIN (executable) and a non-empty VERSION.
debian_fetched() {
  local dest="$1" bin
  shift
  [ -s "$dest/VERSION" ] || return 1
  for bin in "$@"; do [ -x "$dest/$bin" ] || return 1; done
}

debian_fetch() {
  local suite="$1" pkg="$2" dest="$3" uri work deb bin
  shift 3
  debian_fetched "$dest" "$@" && return 0
  uri=$(debian_uri) || return 1
  work=$(mktemp -d)
  mkdir -p "$work/parts" "$work/lists/partial" "$work/cache/archives/partial" "$work/deb"
  printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$uri" "$suite" >"$work/parts/holdfast-lab.sources"
  local apt_opts=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$work/parts"
    -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o "APT::Sandbox::User=root")
  if ! apt-get "${apt_opts[@]}" update -qq || ! (cd "$work/deb" && apt-get "${apt_opts[@]}" download -qq "$pkg"); then
    echo "debian-fetch: could not download '$pkg' from Debian $suite ($uri)" >&2
    rm -rf "$work"
    return 1
  fi
  deb=$(ls "$work"/deb/"${pkg}"_*.deb)
  dpkg-deb -x "$deb" "$work/x"
  rm -rf "$dest.tmp"
  mkdir -p "$dest.tmp"
  for bin in "$@"; do
    [ -f "$work/x/usr/bin/$bin" ] || { echo "debian-fetch: '$pkg' from $suite has no usr/bin/$bin" >&2; rm -rf "$work" "$dest.tmp"; return 1; }
    install -m 0755 "$work/x/usr/bin/$bin" "$dest.tmp/"
  done
  dpkg-deb -f "$deb" Version >"$dest.tmp/VERSION"
  rm -rf "$dest" "$work"
  mv "$dest.tmp" "$dest"
}
