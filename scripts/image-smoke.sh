#!/usr/bin/env bash
# Smoke tests of the built image with podman (`make image`, after scripts/build-image.sh):
#   joinops --version; joinops health against a private Redis (host network); joinops serve --http
#   answering /healthz; joinops worker --burst starting and exiting cleanly; joinops plan against
#   the sandbox's simulated clusters served from the host (scripts/image_hosts.py, with a fake
#   Slack for the bot); the image's labels agree with the chart; nothing to build with inside.
# A failed check prints the container's output. Redis: a private redis-server on a free loopback
# port, stopped at the end (JOINOPS_SMOKE_REDIS_URL names a database to use and flush instead).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/sbin:/sbin" CONTAINERS_CONF="$PWD/scripts/containers.conf"

PY="${PY:-.venv/bin/python}"
redis_dir=$(mktemp -d)
redis_pid=""
if [ -n "${JOINOPS_SMOKE_REDIS_URL:-}" ]; then
  REDIS_URL=$JOINOPS_SMOKE_REDIS_URL
else
  port=$("$PY" -c 'from joinops.private_redis import free_port; print(free_port())')
  redis-server --port "$port" --bind 127.0.0.1 --dir "$redis_dir" --save "" --appendonly no \
    --daemonize no >"$redis_dir/redis.log" 2>&1 &
  redis_pid=$!
  trap 'kill "$redis_pid" 2>/dev/null; wait "$redis_pid" 2>/dev/null; rm -rf "$redis_dir"' EXIT
  REDIS_URL="redis://127.0.0.1:$port/0"
fi
"$PY" - "$REDIS_URL" <<'PY'
import sys, time
import redis
deadline = time.monotonic() + 30
while True:  # redis-server says it is ready only in its log: ask it
    try:
        redis.Redis.from_url(sys.argv[1], socket_timeout=2).flushdb()
        break
    except redis.RedisError as e:
        if time.monotonic() > deadline:
            sys.exit(f"image-smoke: Redis does not answer: {e}")
        time.sleep(0.05)
PY
[ -f .cache/image/build.env ] || { echo "image-smoke: no image built yet: run make image" >&2; exit 1; }
# shellcheck source=/dev/null
. .cache/image/build.env  # IMAGE, from scripts/build-image.sh
started=$SECONDS
work=$(mktemp -d)
hosts_pid=""
serve_name="joinops-smoke-serve-$$"
cleanup() {
  podman rm --force --ignore "$serve_name" >/dev/null 2>&1 || true
  [ -z "$redis_pid" ] || kill "$redis_pid" 2>/dev/null || true
  [ -z "$redis_pid" ] || wait "$redis_pid" 2>/dev/null || true
  rm -rf "$redis_dir"
  [ -z "$hosts_pid" ] || kill "$hosts_pid" 2>/dev/null || true
  [ -z "$hosts_pid" ] || wait "$hosts_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

passed=0
failed=0
fail() {  # fail WHAT OUTPUT-FILE
  echo "image-smoke: FAILED: $1; the container said:" >&2
  sed 's/^/  | /' "$2" >&2
  failed=$((failed + 1))
}
ok() {
  echo "image-smoke: ok: $1"
  passed=$((passed + 1))
}
run() {  # run OUTPUT-FILE podman-run-args... : a container on the host's network, as the chart runs it
  local out=$1
  shift
  podman run --rm --runtime runc --cgroup-manager=cgroupfs --network host --read-only \
    --env "REDIS_URL=$REDIS_URL" "$@" >"$out" 2>&1
}

# 1. --version, and the labels the chart relies on.
version=$("$PY" -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')
if run "$work/version" "$IMAGE" --version && [ "$(cat "$work/version")" = "joinops $version" ]; then
  ok "joinops --version: $(cat "$work/version")"
else
  fail "joinops --version (want 'joinops $version')" "$work/version"
fi
labels=$(podman image inspect --format \
  '{{index .Labels "org.opencontainers.image.title"}}:{{index .Labels "org.opencontainers.image.version"}}' "$IMAGE")
if [ "localhost/$labels" = "$IMAGE" ]; then ok "labels $labels match the tag $IMAGE"; else
  echo "labels: $labels, tag: $IMAGE" >"$work/labels"
  fail "the image's labels and the chart's image" "$work/labels"
fi
podman run --rm --runtime runc --cgroup-manager=cgroupfs --network none --entrypoint /bin/sh "$IMAGE" -c '
  id -u; for tool in gcc cc make pip pip3 apt-get; do command -v $tool; done
  ls -d /src /opt/build /root/.cache /tmp/wheels 2>/dev/null
  find / -xdev \( -name tests -path "*/site-packages/*" \) -print 2>/dev/null' >"$work/inside" 2>&1 || true
# apt-get is part of the Debian base (dpkg's tooling), the rest must be absent.
if [ "$(grep -v -e '^10001$' -e '/apt-get$' "$work/inside")" = "" ] && grep -qx 10001 "$work/inside"; then
  ok "runs as uid 10001; no compiler, pip, sources, build venv, caches or tests inside"
else
  fail "what the final image holds (want uid 10001 and nothing else listed)" "$work/inside"
fi

# 2. health: the Redis answers.
if run "$work/health" "$IMAGE" health; then ok "joinops health against $REDIS_URL"; else
  fail "joinops health against $REDIS_URL" "$work/health"
fi

# The simulated clusters and the fake Slack, served from the host.
mkdir -p "$work/hosts"
"$PY" scripts/image_hosts.py "$work/hosts" >"$work/hosts.log" 2>&1 &
hosts_pid=$!
for _ in $(seq 1 300); do
  grep -qx ready "$work/hosts.log" && break
  kill -0 "$hosts_pid" 2>/dev/null || break
  sleep 0.1
done
grep -qx ready "$work/hosts.log" || { fail "the simulated clusters did not start" "$work/hosts.log"; exit 1; }
hosts=(--volume "$work/hosts:$work/hosts:ro" --env "JOINOPS_CONFIG=$work/hosts/joinops.yaml")

# 3. serve --http answers /healthz.
port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
podman run --detach --name "$serve_name" --runtime runc --cgroup-manager=cgroupfs --network host \
  --read-only --env "REDIS_URL=$REDIS_URL" --env-file "$work/hosts/slack.env" "${hosts[@]}" \
  "$IMAGE" serve --http --host 127.0.0.1 --port "$port" >/dev/null
healthy=""
for _ in $(seq 1 300); do
  if curl -fsS "http://127.0.0.1:$port/healthz" >"$work/healthz" 2>/dev/null; then healthy=1; break; fi
  [ "$(podman inspect --format '{{.State.Running}}' "$serve_name")" = true ] || break
  sleep 0.1
done
podman stop --time 10 "$serve_name" >/dev/null
stopped=$(podman inspect --format '{{.State.ExitCode}}' "$serve_name")
podman logs "$serve_name" >"$work/serve" 2>&1
if [ -n "$healthy" ] && [ "$stopped" = 0 ]; then
  ok "joinops serve --http answers /healthz ($(cat "$work/healthz")) and stops on SIGTERM"
else
  fail "joinops serve --http: /healthz answered: ${healthy:-no}, exit code after SIGTERM: $stopped" "$work/serve"
fi

# 4. worker --burst: starts, finds the queue empty, exits 0.
if run "$work/worker" "${hosts[@]}" "$IMAGE" worker --burst --log-format text; then
  ok "joinops worker --burst started and exited cleanly"
else
  fail "joinops worker --burst" "$work/worker"
fi

# 5. plan against the simulated clusters: one move allowed, one refused (last control plane).
if run "$work/plan" "${hosts[@]}" "$IMAGE" plan a-w-1 --from clusterA --to clusterB \
  && grep -q '^ALLOWED: move a-w-1 from clusterA to clusterB' "$work/plan"; then
  ok "joinops plan a-w-1 --from clusterA --to clusterB: ALLOWED"
else
  fail "joinops plan a-w-1 --from clusterA --to clusterB (want ALLOWED, exit 0)" "$work/plan"
fi
code=0
run "$work/refused" "${hosts[@]}" "$IMAGE" plan a-cp-1 --from clusterA --to clusterB || code=$?
if [ "$code" = 1 ] && grep -q '^REFUSED' "$work/refused"; then
  ok "joinops plan a-cp-1 --from clusterA --to clusterB: REFUSED (exit 1)"
else
  fail "joinops plan a-cp-1 (want REFUSED, exit 1; got exit $code)" "$work/refused"
fi

echo "image-smoke: finished in $((SECONDS - started))s"
echo "image-smoke: $passed passed, $failed failed"
[ "$failed" = 0 ]
