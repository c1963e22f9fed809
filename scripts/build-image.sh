#!/usr/bin/env bash
# Build the joinops image with no registry (`make image` runs this, then scripts/image-smoke.sh):
#  1. the base: scripts/base-image.sh (debootstrap minbase bookworm, imported locally, cached);
#  2. the Dockerfile with buildah, PYTHON_IMAGE set to that base: the wheel built from this checkout
#     and its dependencies from PyPI (the only thing fetched during the build);
#  3. the size and the build time, printed and written to .cache/image/build.env for the smoke test.
# The tag is the chart's default: values.yaml's image.repository and Chart.yaml's appVersion.
# BUILD_CA_BUNDLE (default: $PIP_CERT, else pip's configured cert) is a CA bundle pip trusts during the build, for a
# TLS-inspecting proxy; it is mounted into the build, never copied into the image.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/sbin:/sbin" CONTAINERS_CONF="$PWD/scripts/containers.conf"

BASE=localhost/joinops-base:bookworm
PY="${PY:-.venv/bin/python}"
started=$SECONDS

scripts/image-tools.sh
[ -x "$PY" ] || { echo "image: $PY is missing: run make install first" >&2; exit 1; }
image=$("$PY" - <<'PY'
import yaml
values = yaml.safe_load(open("helm/joinops/values.yaml"))["image"]
chart = yaml.safe_load(open("helm/joinops/Chart.yaml"))
print(f"{values['repository']}:{values['tag'] or chart['appVersion']}")
PY
)
case "$image" in */*) ;; *) image="localhost/$image" ;; esac  # podman's name for a local image

image_id() { podman image inspect --format '{{.Id}}' "$1" 2>/dev/null || true; }
# The images this build replaces, removed once it is done so rebuilds do not pile up.
old_image=$(image_id "$image")
old_base=$(image_id "$BASE")

scripts/base-image.sh "$BASE"
base_seconds=$((SECONDS - started))

ca_args=()
ca="${BUILD_CA_BUNDLE:-${PIP_CERT:-$("$PY" -m pip config get global.cert 2>/dev/null || true)}}"
if [ -n "$ca" ] && [ -f "$ca" ]; then
  ca_args=(--volume "$(readlink -f "$ca"):/run/build-ca.pem:ro" --build-arg BUILD_CA_BUNDLE=/run/build-ca.pem)
fi
echo "image: buildah bud -t $image (FROM $BASE)"
build_started=$SECONDS
buildah bud --quiet --runtime runc --isolation chroot --network host --layers=false \
  --pull=never --build-arg "PYTHON_IMAGE=$BASE" "${ca_args[@]}" -t "$image" . >/dev/null
build_seconds=$((SECONDS - build_started))

for old in "$old_image" "$old_base"; do
  if [ -n "$old" ] && [ "$old" != "$(image_id "$image")" ] && [ "$old" != "$(image_id "$BASE")" ]; then
    podman rmi "$old" >/dev/null 2>&1 || true
  fi
done

bytes=$(podman image inspect --format '{{.Size}}' "$image")
mb=$(( (bytes + 500000) / 1000000 ))
cat >.cache/image/build.env <<ENV
IMAGE=$image
IMAGE_BYTES=$bytes
BASE_SECONDS=$base_seconds
BUILD_SECONDS=$build_seconds
ENV
echo "image: $image is $mb MB; base ${base_seconds}s, buildah ${build_seconds}s, total $((SECONDS - started))s"
if [ "$mb" -gt 250 ]; then
  echo "image: $image is over the 250 MB target (docs/benchmarks.md)" >&2
  exit 1
fi
