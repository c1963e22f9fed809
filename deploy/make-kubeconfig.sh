#!/usr/bin/env bash
# Make a kubeconfig for joinops's ServiceAccount on one managed cluster, after
# `kubectl apply -f deploy/managed-cluster-rbac.yaml` there. It reads the long-lived token and
# the cluster's CA from the Secret joinops-token and writes a kubeconfig file (mode 0600). The
# token is never printed.
#
#   deploy/make-kubeconfig.sh --context prod-east --name prod-east
#   -> prod-east.kubeconfig; then (docs/deploy.md):
#   kubectl -n joinops create secret generic joinops-kubeconfig-prod-east \
#     --from-file=kubeconfig=prod-east.kubeconfig
set -euo pipefail

usage() {
  cat <<'EOF'
usage: deploy/make-kubeconfig.sh [options]
  --context CONTEXT    kubectl context of the managed cluster (default: the current one)
  --name NAME          the cluster's name in joinops (default: the context's name)
  --server URL         API server URL written to the kubeconfig (default: the context's server)
  --namespace NS       namespace of the ServiceAccount (default: joinops-system)
  --secret NAME        its token Secret (default: joinops-token)
  --output FILE        where to write (default: NAME.kubeconfig; - for standard output)
  --wait SECONDS       how long to wait for the token to be filled in (default: 30)
EOF
}

context="" name="" server="" namespace="joinops-system" secret="joinops-token" output="" wait=30
while [ $# -gt 0 ]; do
  case "$1" in
    --context) context="${2:?--context needs a value}"; shift 2 ;;
    --name) name="${2:?--name needs a value}"; shift 2 ;;
    --server) server="${2:?--server needs a value}"; shift 2 ;;
    --namespace) namespace="${2:?--namespace needs a value}"; shift 2 ;;
    --secret) secret="${2:?--secret needs a value}"; shift 2 ;;
    --output) output="${2:?--output needs a value}"; shift 2 ;;
    --wait) wait="${2:?--wait needs a value}"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "make-kubeconfig: unknown argument $1" >&2; usage >&2; exit 2 ;;
  esac
done

kube() {
  if [ -n "$context" ]; then kubectl --context "$context" "$@"; else kubectl "$@"; fi
}
die() { echo "make-kubeconfig: $*" >&2; exit 1; }

command -v kubectl >/dev/null || die "kubectl is not on PATH"
if [ -z "$context" ]; then
  context=$(kubectl config current-context) || die "no current kubectl context: use --context"
fi
name="${name:-$context}"
[[ "$name" =~ ^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$ ]] \
  || die "--name $name: use 1-63 letters, digits, '.', '_' or '-' (a joinops cluster name)"
if [ -z "$server" ]; then
  server=$(kube config view --minify --raw -o 'jsonpath={.clusters[0].cluster.server}')
fi
[ -n "$server" ] || die "cannot tell the API server of context $context: use --server"

# The token controller fills the Secret in shortly after it is created.
token="" ca=""
deadline=$((SECONDS + wait))
while :; do
  token=$(kube -n "$namespace" get secret "$secret" -o 'jsonpath={.data.token}' 2>/dev/null || true)
  ca=$(kube -n "$namespace" get secret "$secret" -o 'jsonpath={.data.ca\.crt}' 2>/dev/null || true)
  if [ -n "$token" ] && [ -n "$ca" ]; then break; fi
  if [ "$SECONDS" -ge "$deadline" ]; then
    die "Secret $namespace/$secret has no token yet (did you apply deploy/managed-cluster-rbac.yaml to $context?)"
  fi
  sleep 1
done
token=$(printf '%s' "$token" | base64 -d) || die "the token in $namespace/$secret is not base64"

output="${output:-$name.kubeconfig}"
write() {
  cat <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: $name
    cluster:
      server: $server
      certificate-authority-data: $ca
users:
  - name: joinops@$name
    user:
      token: $token
contexts:
  - name: $name
    context:
      cluster: $name
      user: joinops@$name
current-context: $name
EOF
}
if [ "$output" = "-" ]; then
  write
else
  (umask 077 && write >"$output")
  echo "make-kubeconfig: wrote $output for cluster $name ($server). Next:" >&2
  echo "  kubectl -n <joinops namespace> create secret generic joinops-kubeconfig-$(printf '%s' "$name" | tr 'A-Z_.' 'a-z--') --from-file=kubeconfig=$output" >&2
fi
