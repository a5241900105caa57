#!/usr/bin/env bash
# The guard container image (#50), built with Debian's buildah: no daemon, no registry, no base
# image. It stages deploy/Containerfile's rootfs/ (the standalone executable, the libraries `ldd`
# names and Debian's busybox-static with the applets --local uses), builds on private throw-away
# storage and writes one OCI archive, localhost/holdfast:VERSION, that k3s imports like any other.
#
#   bash scripts/build-guard-image.sh [--out DIR] [--exe FILE] [--tag NAME]
#     → DIR/holdfast-guard.tar (default DIR: out/image). Run as root, as CI does.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

die() { echo "build-guard-image: $*" >&2; exit 1; }

out="$root/out/image"
exe=''
version="$(node -p 'require(process.argv[1]).version' "$root/package.json" 2>/dev/null)" || die 'node is needed to read the version from package.json'
tag="localhost/holdfast:$version"
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="${2:?--out needs a directory}"; shift 2 ;;
    --exe) exe="${2:?--exe needs a file}"; shift 2 ;;
    --tag) tag="${2:?--tag needs an image name}"; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
command -v buildah >/dev/null || die 'buildah is missing: apt-get install buildah'
command -v ldd >/dev/null || die 'ldd is missing: apt-get install libc-bin'
busybox=/bin/busybox
[ -x "$busybox" ] && ! ldd "$busybox" >/dev/null 2>&1 || die "$busybox is missing or not static: apt-get install busybox-static"
[ -z "$exe" ] || [ -x "$exe" ] || die "--exe $exe is not an executable file"

work="$(mktemp -d "${TMPDIR:-/tmp}/holdfast-image.XXXXXX")"
# Private storage, policy and registries.conf: nothing read from or left in /var/lib/containers.
store=(--root "$work/storage" --runroot "$work/run" --storage-driver vfs)
cleanup() {
  buildah "${store[@]}" rm --all >/dev/null 2>&1 || true
  buildah "${store[@]}" rmi --all --force >/dev/null 2>&1 || true
  rm -rf "$work" 2>/dev/null || true
}
trap cleanup EXIT
export TMPDIR="$work" CONTAINERS_REGISTRIES_CONF="$work/registries.conf"
: >"$work/registries.conf"
echo '{"default":[{"type":"insecureAcceptAnything"}]}' >"$work/policy.json"

if [ -z "$exe" ]; then
  exe="$work/exe/holdfast"
  node "$root/scripts/build-cli-exe.mjs" --out "$exe" >&2 || die 'building the standalone executable failed (scripts/build-cli-exe.mjs)'
fi

# rootfs/: the executable, each library at the path ldd resolves it to, root's passwd entry,
# /tmp and HOLDFAST_HOME as mount points.
rootfs="$work/ctx/rootfs"
install -D -m 0755 "$exe" "$rootfs/usr/local/bin/holdfast"
# A statically linked executable needs no library: ldd says so and fails.
libs="$(ldd "$exe" 2>&1)" || grep -q 'not a dynamic executable' <<<"$libs" || die "ldd cannot read $exe: $libs"
if grep -q 'not found' <<<"$libs"; then die "$exe needs a library this machine lacks: $(grep 'not found' <<<"$libs" | tr -s ' \t' ' ')"; fi
for lib in $(grep -o '/[^ ]*' <<<"$libs"); do
  mkdir -p "$rootfs$(dirname "$lib")"
  cp -L "$lib" "$rootfs$lib"
done
# The shell and tools of the scripts --local runs on the node (the probe, kubelet's settings, the
# needs rule, the snapshotter, registries.yaml) and of the DaemonSet's loop: one link per applet.
install -D -m 0755 "$busybox" "$rootfs/bin/busybox"
for applet in sh awk cat df find grep head ls sed sleep sort tr uname; do
  ln -s busybox "$rootfs/bin/$applet"
done
mkdir -p "$rootfs/etc" "$rootfs/var/lib/holdfast" "$rootfs/tmp"
chmod 0700 "$rootfs/var/lib/holdfast"
chmod 1777 "$rootfs/tmp"
echo 'root:x:0:0:root:/var/lib/holdfast:/usr/local/bin/holdfast' >"$rootfs/etc/passwd"
echo 'root:x:0:' >"$rootfs/etc/group"

mkdir -p "$out"
archive="$out/holdfast-guard.tar"
buildah "${store[@]}" build --quiet --signature-policy "$work/policy.json" --pull-never --layers=false \
  --format oci --build-arg "VERSION=$version" --file "$root/deploy/Containerfile" --tag "$tag" "$work/ctx" >/dev/null \
  || die 'buildah build failed (see above)'
# Written aside, then renamed: a reader never sees half an archive.
rm -f "$archive.tmp"
buildah "${store[@]}" push --quiet --signature-policy "$work/policy.json" "$tag" "oci-archive:$archive.tmp:$tag" \
  || die "buildah push to $archive failed (see above)"
mv -f "$archive.tmp" "$archive"
echo "$archive: $tag, $(du -m "$archive" | cut -f1) MiB, sha256 $(sha256sum "$archive" | cut -d' ' -f1)"
