#!/usr/bin/env bash
# Are the tools `make image` needs on this machine? Names the Debian package for each one missing
# and exits 1 (.ci/run installs them: apt-get install debootstrap buildah podman runc).
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"  # debootstrap and runc live there

missing=()
need() {  # need COMMAND PACKAGE
  command -v "$1" >/dev/null 2>&1 || missing+=("$1 (apt-get install $2)")
}
need debootstrap debootstrap
need buildah buildah
need podman podman
need runc runc
if [ "${#missing[@]}" -gt 0 ]; then
  echo "image: missing on this machine:" >&2
  printf '  %s\n' "${missing[@]}" >&2
  echo "image: install them with: apt-get install debootstrap buildah podman runc" >&2
  exit 1
fi
if [ "$(id -u)" != 0 ]; then
  echo "image: debootstrap and the podman settings used here need root (run as root)" >&2
  exit 1
fi
