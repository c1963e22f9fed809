#!/usr/bin/env bash
# The image's base, made here from Debian's packages (`make image` calls it; no registry is pulled):
#   debootstrap --variant=minbase bookworm, with Debian's Python 3.11, venv and CA certificates,
#   trimmed of docs, man pages, locales and apt's lists, then imported as a local image.
# The root filesystem is kept as a tarball under .cache/image/ (ignored by git) and reused while
# this script and its package list stay the same; CI starts clean and makes it once.
# Usage: scripts/base-image.sh [IMAGE]   (default localhost/joinops-base:bookworm)
# Needs root, debootstrap and podman (scripts/image-tools.sh checks them).
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE="${1:-localhost/joinops-base:bookworm}"
SUITE=bookworm
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
PACKAGES=python3,python3-venv,ca-certificates
CACHE=.cache/image
# The tarball's name changes with what goes into it, so a changed list never reuses an old one.
key=$(cat "$0" | sha256sum | cut -c1-12)
tarball="$CACHE/base-$SUITE-$key.tar"
started=$SECONDS

make_rootfs() {
  local root
  root=$(mktemp -d "$CACHE/rootfs.XXXXXX")
  trap 'rm -rf "$root"' RETURN
  echo "base-image: debootstrap --variant=minbase $SUITE (+$PACKAGES) from $MIRROR"
  if ! debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$root" "$MIRROR" \
    >"$CACHE/debootstrap.log" 2>&1; then
    echo "base-image: debootstrap failed; its log:" >&2
    tail -n 40 "$CACHE/debootstrap.log" >&2
    return 1
  fi
  # What a container never needs: apt's downloads and lists, documentation, other languages.
  rm -rf "$root"/var/cache/apt/* "$root"/var/lib/apt/lists/* "$root"/var/log/* \
    "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* \
    "$root"/usr/share/locale/* "$root"/usr/share/lintian "$root"/tmp/* "$root"/root/.cache
  tar --numeric-owner --xattrs -C "$root" -cf "$tarball.partial" .
  mv "$tarball.partial" "$tarball"
}

mkdir -p "$CACHE"
if [ -f "$tarball" ]; then
  echo "base-image: reusing $tarball"
else
  rm -f "$CACHE"/base-"$SUITE"-*.tar
  make_rootfs
fi
podman import --quiet \
  --change 'CMD ["/usr/bin/python3"]' \
  --change 'ENV LANG=C.UTF-8' \
  --change "LABEL org.opencontainers.image.base.name=debian:$SUITE-minbase" \
  "$tarball" "$IMAGE" >/dev/null
echo "base-image: $IMAGE ready in $((SECONDS - started))s ($(du -h "$tarball" | cut -f1) uncompressed)"
