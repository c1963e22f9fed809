"""Prometheus metrics, all defined here; `serve(port)` exposes them at /metrics.

Counters and histograms are per process (each worker exposes its own; the bot's two processes,
the acking one and its post-ack one, share theirs through prometheus_client's multiprocess
mode and the acking process exposes their sums); the gauges
of requests by state and of the queue depth are read from Redis when scraped. The active
requests come from a callable handed to `serve` (the request store's `active`), so this module
imports no store and the store can count its transitions here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

import redis
from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    multiprocess,
    start_http_server,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from joinops.queue import queue

# prometheus_client's multiprocess mode: each process's values in files there (read at import)
MULTIPROC_DIR = "PROMETHEUS_MULTIPROC_DIR"

STEP_SECONDS = Histogram(
    "joinops_step_duration_seconds",
    "How long a migration step took",
    ["step", "outcome"],
    buckets=(0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800),
)
TRANSITIONS = Counter(
    "joinops_request_transitions_total", "Requests that entered a state", ["state"]
)
EVICTIONS = Counter("joinops_drain_evictions_total", "Evictions the API server accepted")
EVICTIONS_REFUSED = Counter(
    "joinops_drain_rate_limited_total", "Evictions answered 429 (disruption budgets), retried"
)
KUBE_ERRORS = Counter(
    "joinops_kubernetes_api_errors_total", "Kubernetes API calls that failed", ["cluster", "kind"]
)
SLACK_ERRORS = Counter(
    "joinops_slack_api_errors_total", "Slack Web API calls that failed", ["method"]
)


class HasState(Protocol):
    @property
    def state(self) -> object: ...


ActiveRequests = Callable[[], Iterable[HasState]]


class RedisGauges(Collector):
    """Active requests by state, and jobs waiting in the queue, read at scrape time."""

    def __init__(self, redis_client: redis.Redis, active_requests: ActiveRequests) -> None:
        self.redis = redis_client
        self.active_requests = active_requests

    def collect(self) -> Iterator[GaugeMetricFamily]:
        by_state = GaugeMetricFamily(
            "joinops_requests", "Active requests by state", labels=["state"]
        )
        counts: dict[str, int] = {}
        try:
            for request in self.active_requests():
                counts[str(request.state)] = counts.get(str(request.state), 0) + 1
            depth = len(queue(self.redis))
        except redis.RedisError:
            return
        for state, count in sorted(counts.items()):
            by_state.add_metric([state], count)
        yield by_state
        yield GaugeMetricFamily("joinops_queue_depth", "Jobs waiting for a worker", value=depth)


def serve(port: int, redis_client: redis.Redis, active_requests: ActiveRequests) -> None:
    """/metrics on `port`. With PROMETHEUS_MULTIPROC_DIR set (the bot: `joinops serve` sets it
    for itself and its post-ack process, cli/serve_cmd.py), the counters and histograms of every
    process writing there, summed: one scrape of the pod has the post-ack process's too."""
    registry = REGISTRY
    if os.environ.get(MULTIPROC_DIR):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    registry.register(RedisGauges(redis_client, active_requests))
    start_http_server(port, addr="0.0.0.0", registry=registry)
