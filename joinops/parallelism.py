"""How many of a batch's worker joins run at once: `max_parallel`, and what `auto` chooses.

`max_parallel: auto` (the default) is the smaller of two limits, chosen when the batch is planned
and stored on it, so the number its message shows is the one its workers keep to:

- **The target's join admission** (`join_admission`, default 64): nodes joining one target at
  once. Each join makes the target's control plane work on the node's behalf — the kubelet's
  bootstrap requests (bootstrap-token users fall under API Priority and Fairness's
  `global-default` level, about 49 of a default API server's 600 seats, shared with every
  other client that is not a node, a controller or a service account; a kubelet's bootstrap
  is a few short requests one after another, so 64 joining kubelets hold a handful of seats
  at any moment), and kube-controller-manager approving and signing its certificate request
  and creating its DaemonSet pods within its own client limit (20 requests a second, bursts
  of 30, by default): about five requests a join, so 64 joins cost it some 16 s of its budget,
  spread over joins that themselves take 20 s to a minute until Ready — the node autoscalers
  add nodes in larger bursts than that. Raise it for a control plane sized for more, lower it
  for a small one (or one whose controller manager already runs near its limit).
  Control-plane joins are one at a time per target whatever this says (workers/batch.py).
- **The workers** (`joins_per_worker` per live `joinops worker`, default 16): a migration holds
  its worker only for its short steps (the checks, the probe pods, the agent's start) and
  gives it up while it waits for a drain or a join, so one worker carries many; 16 each keeps
  the queue of starting migrations short enough that the re-checks of waiting ones (queued
  first) are not held up. Live workers are RQ's registrations on the joinops queue: a worker
  killed without a shutdown still counts until its registration lapses (RQ's worker ttl).

An explicit number (1 to 64) is used as it is.
"""

from __future__ import annotations

import redis
from rq import Queue, worker_registration

from joinops.queue import QUEUE
from joinops.settings import Settings

STORED = "max_parallel"  # the batch record's field (`x:max_parallel`) with the chosen number


def live_workers(connection: redis.Redis) -> int:
    """`joinops worker` processes registered on the joinops queue whose registration is alive."""
    keys = sorted(worker_registration.get_keys(queue=Queue(QUEUE, connection=connection)))
    if not keys:
        return 0
    with connection.pipeline(transaction=False) as pipe:
        for key in keys:
            pipe.exists(key)
        return sum(bool(alive) for alive in pipe.execute())


def chosen(settings: Settings, workers: int) -> int:
    """The batch's width with `workers` live workers (none yet counts as one: the batch waits
    for a worker anyway, and plans for the first)."""
    if isinstance(settings.max_parallel, int):
        return settings.max_parallel
    by_workers = max(1, workers) * settings.joins_per_worker
    return max(1, min(settings.join_admission, by_workers))


def for_new_batch(settings: Settings, connection: redis.Redis) -> int:
    """The width to store on a batch being planned now."""
    if isinstance(settings.max_parallel, int):
        return settings.max_parallel
    return chosen(settings, live_workers(connection))


def stored(extra: dict[str, str]) -> int | None:
    """The width a batch was planned with; None for a batch stored before it was recorded."""
    value = extra.get(STORED, "")
    return int(value) if value.isdigit() and int(value) > 0 else None
