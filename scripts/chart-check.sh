#!/usr/bin/env bash
# Chart checks (CI: `make chart-check`). Needs .venv (make install) and PyPI; nothing else.
#  1. helm lint --strict, with the default values and with each example under helm/joinops/examples.
#  2. helm template with the default values, each example, and a few more switches; every rendered
#     object, and deploy/managed-cluster-rbac.yaml, validated against the Kubernetes schemas in
#     strict mode (kubernetes-validate, offline), pods hardened, the rendered config accepted by
#     joinops (tests/deploy/deploy_check.py).
#  3. The chart's managed-cluster RBAC grants exactly what deploy/managed-cluster-rbac.yaml does.
#  4. helm refuses bad values: wrong types and unknown keys (values.schema.json), and the
#     combinations the templates reject.
set -euo pipefail
cd "$(dirname "$0")/.."

KUBERNETES_VERSION=1.33.0         # the newest the pinned kubernetes-validate has schemas for
KUBERNETES_VALIDATE_VERSION=1.33.1
CHART=helm/joinops
PY="${PY:-.venv/bin/python}"
started=$SECONDS

[ -x "$PY" ] || { echo "chart-check: $PY is missing: run make install first" >&2; exit 1; }
helm=$(scripts/fetch-helm.sh)
if ! "$PY" -m pip show kubernetes-validate 2>/dev/null | grep -qx "Version: $KUBERNETES_VALIDATE_VERSION"; then
  echo "chart-check: installing kubernetes-validate $KUBERNETES_VALIDATE_VERSION into $PY's venv"
  "$PY" -m pip install --quiet --disable-pip-version-check "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION"
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
render() {  # render NAME [helm args...]
  local name=$1
  shift
  "$helm" template joinops "$CHART" --namespace joinops "$@" >"$out/$name.yaml"
}

echo "chart-check: helm lint --strict"
"$helm" lint --strict --quiet "$CHART"
for example in "$CHART"/examples/*.yaml; do
  "$helm" lint --strict --quiet "$CHART" -f "$example"
done

echo "chart-check: helm template"
render default
for example in "$CHART"/examples/*.yaml; do
  render "example-$(basename "$example" .yaml)" -f "$example"
done
render http-no-ingress --set bot.mode=http --set metrics.enabled=true
render arrivals --set arrivals.secretName=joinops-hosts --set arrivals.channel=C0123ARRIV \
  --set arrivals.propose.to=clusterB --set arrivals.propose.as=worker
render managed-rbac --set managedClusterRbac.enabled=true --set serviceAccount.name=joinops-bot \
  --set 'clusters[0].name=home' --set 'clusters[0].inCluster=true'
render own-serviceaccount --set serviceAccount.create=false --set serviceAccount.name=existing \
  --set redis.networkPolicy=false --set 'imagePullSecrets[0]=regcred'

"$PY" tests/deploy/deploy_check.py validate --kubernetes-version "$KUBERNETES_VERSION" "$out"/*.yaml
"$PY" tests/deploy/deploy_check.py validate --no-config --kubernetes-version "$KUBERNETES_VERSION" \
  deploy/managed-cluster-rbac.yaml
"$PY" tests/deploy/deploy_check.py rbac --service-account joinops/joinops-bot "$out/managed-rbac.yaml"

echo "chart-check: bad values are refused"
refused=0
refuse() {  # refuse "what helm must say" [helm args...]
  local expected=$1
  shift
  if "$helm" template joinops "$CHART" "$@" >/dev/null 2>"$out/error"; then
    echo "chart-check: helm accepted $*" >&2
    exit 1
  fi
  if ! grep -q -- "$expected" "$out/error"; then
    echo "chart-check: helm refused $* but did not say '$expected':" >&2
    cat "$out/error" >&2
    exit 1
  fi
  refused=$((refused + 1))
}
refuse "want integer" --set-string bot.port=3000
refuse "want boolean" --set-string redis.bundled=true
refuse "'colour' not allowed" --set bot.colour=red
refuse "'colour' not allowed" --set colour=red
refuse "'sleep' not allowed" --set config.timeouts.sleep=1m
refuse "maximum" --set config.max_parallel=65
refuse "socket" --set bot.mode=websocket
refuse "'kubeconfig' not allowed" --set 'clusters[0].name=a' --set 'clusters[0].kubeconfig=/x'
refuse "set redis.url or redis.existingSecret" --set redis.bundled=false
refuse "set redis.bundled=false" --set redis.url=redis://elsewhere:6379/0
refuse "needs bot.mode=http" --set bot.ingress.enabled=true
refuse "bot.ingress.host is required" --set bot.mode=http --set bot.ingress.enabled=true
refuse "needs secretName" --set 'clusters[0].name=a'
refuse "listed twice" --set 'clusters[0].name=a' --set 'clusters[0].inCluster=true' \
  --set 'clusters[1].name=a' --set 'clusters[1].secretName=s'
echo "chart-check: helm refused $refused sets of bad values"
echo "chart-check: passed in $((SECONDS - started))s"
