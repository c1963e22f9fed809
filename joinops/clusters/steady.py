"""Reads of a cluster's settings that do not change while a batch runs, kept a few seconds.

Every migration into a target read the same things of it again and again: its version, its
kubeadm ClusterConfiguration (kube-system/kubeadm-config), its kubelet configuration
(kube-system/kubelet-config) and its API server's port, each two or three times per node; a
batch of 64 nodes read each about 150 times in a few seconds. A worker's client keeps each
answer `STEADY_SECONDS` (per client: a rewritten kubeconfig is a new client with nothing
kept), so a batch's migrations in one worker read them about once per few seconds.

Why that is safe for these: they change only when an operator reconfigures or upgrades the
cluster (`kubeadm upgrade apply`, an edited kubeadm-config), never because of a migration,
and a migration already relies on them for far longer than a few seconds (the check's reading
holds from the re-check until the node joins, minutes later; a batch plans with one reading
for all its nodes).

What is never kept, because a migration or a batch changes it, or because it is the last word
before a step that cannot be undone: the nodes and control planes (nodes join during a batch;
the pod ranges left, `podranges`, are counted from them), pods, bootstrap tokens, cluster-info
(its signatures are per token: the check before the node agent must see this token's), and
anything read for a write. Errors are never kept: the next read asks again.

The bot keeps nothing (`ClusterRegistry(..., steady_seconds=0)`): a user who fixes a
cluster's kubeadm-config and asks again gets the fix at once.

**Not used by the workers either, for now** (workers/context.py passes 0): a check is the last
word before a reset, and a kept version let a loan's return past the version rule a moment
after its home cluster was upgraded (tests/bot/test_loans.py,
`test_a_return_a_version_no_longer_allows_is_not_attempted`, failed with it). Keeping reads only
within one batch's planning, or re-reading them in the check right before the agent, would make
it safe; until then the cut costs two or three requests per node.

**Within one run, from the check into the join material** (`KubeCluster.keeping`, used by
workers/run.py as workers/runner.py says): the join-material step's first attempt, right
after the check in the same run, builds the material from the very reading the check judged —
these reads, the target's facts (its control planes too) and the node's — instead of reading
them again moments later. Any other step, a retry, and every other run or request read afresh.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

STEADY_SECONDS = 5.0  # a worker's: about one batch's migrations in one worker


class SteadyReads:
    """Answers by name, each kept `seconds` from when it was read (0: nothing is kept)."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._kept: dict[str, tuple[float, Any]] = {}
        self._lock = threading.Lock()

    def get(self, name: str, read: Callable[[], T]) -> T:
        """The answer to `read` kept under `name`, or `read()` now (and kept) when there is
        none or it is older than `seconds`. What `read` raises is raised, and not kept."""
        if self.seconds <= 0:
            return read()
        now = self._clock()
        with self._lock:
            kept = self._kept.get(name)
        if kept is not None and kept[0] > now:
            value: T = kept[1]
            return value
        value = read()
        with self._lock:
            self._kept[name] = (now + self.seconds, value)
        return value
