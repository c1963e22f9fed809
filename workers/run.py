"""One run of one request's job: the context every step of a migration reads and writes."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from joinops.clusters.kube import KubeCluster
from joinops.joinmaterial import BootstrapToken
from joinops.requests.asks import MigrationAsk
from joinops.requests.events import Event, EventKind
from joinops.requests.lifecycle import State
from joinops.requests.store import Request
from workers.context import EngineContext
from workers.errors import LockLost


@dataclass
class Run:
    """One run of one request's job: what every step reads and writes."""

    ctx: EngineContext
    request: Request
    resuming: bool = False  # the current step was interrupted (worker died) and is resumed
    lost: threading.Event | None = None  # set when this run's locks expired under it
    confirm_locks: Callable[[], None] | None = None  # renews them now; sets `lost` if gone
    token: BootstrapToken | None = None  # minted in this process (its secret is never stored)
    park: bool = False  # may a waiting step give up its worker (raise Waiting)? Jobs say yes
    waking: bool = False  # this run resumes a step parked for a re-check (no new record)
    step_started: float = 0.0  # when the current step began (its record's start)
    keeping: bool = False  # do `source` and `target` keep what they read? (workers/runner.py)
    # this run's keeping view of each cluster (`KubeCluster.keeping`), by name, with its client
    _views: dict[str, tuple[KubeCluster, KubeCluster]] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.request.id

    @property
    def source(self) -> KubeCluster:
        return self._client(self.request.source)

    @property
    def target(self) -> KubeCluster:
        return self._client(self.request.target)

    def _client(self, name: str) -> KubeCluster:
        """The step's client for `name`; while `keeping`, a view of it that keeps what it read
        of the cluster's settings and facts until `forget_reads` (another client — a rewritten
        kubeconfig — gets a new view)."""
        client = self.ctx.clusters.get(name)
        if not self.keeping:
            return client
        kept = self._views.get(name)
        if kept is None or kept[0] is not client:
            kept = self._views[name] = (client, client.keeping())
        return kept[1]

    def forget_reads(self) -> None:
        """What the views kept is dropped: the next keeping view reads afresh."""
        self._views.clear()

    @property
    def ask(self) -> MigrationAsk:
        r = self.request
        return MigrationAsk(r.node, r.source, r.target, r.role, r.force)

    @property
    def namespace(self) -> str:
        return self.ctx.settings.agent.namespace

    def memory(self, step: str) -> dict[str, Any]:
        return self.ctx.records.get(self.id, step).data

    def remember(self, step: str, **data: Any) -> None:
        self.ctx.records.remember(self.id, step, **data)

    def progress(self, step: str, text: str, *, done: int = 0, total: int = 0) -> None:
        """A line inside `step`; `done` of `total` when it counts something (pods gone)."""
        self.ctx.reporter.emit(
            Event(
                self.id,
                EventKind.PROGRESS,
                text,
                step=step,
                at=self.ctx.clock(),
                done=done,
                total=total,
            )
        )

    def confirm_ours(self) -> None:
        """Renew this run's locks now; `LockLost` when another run may own the request."""
        if self.confirm_locks is not None:
            self.confirm_locks()
        if self.lost is not None and self.lost.is_set():
            raise LockLost()

    def cancelled(self) -> bool:
        return self.ctx.store.state_of(self.id) is State.CANCELLED
