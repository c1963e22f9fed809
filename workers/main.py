"""`joinops worker`: an RQ worker on the bot's checks queue and the joinops queue, with the
scheduler (loans' timed jobs), recovery, the expiry of undecided requests and the re-checks of
parked steps."""

from __future__ import annotations

import os

from rq import SimpleWorker

from joinops import logs, metrics
from joinops.asking import CHECKS_QUEUE
from joinops.clusters.kube import warm_up
from joinops.queue import QUEUE, sweep_rechecks
from joinops.settings import Settings
from workers import context, expiry
from workers.context import EngineContext
from workers.periodic import Periodic
from workers.recovery import recovery_pass, resume_orphans

RECHECK_SWEEP = 0.1  # seconds between looks for due re-checks: how late a parked step wakes
COMMANDS_WAKE = 1.0  # seconds: how often RQ's command listener thread looks whether to end


class _Worker(SimpleWorker):
    """RQ's SimpleWorker, its command listener (the thread on the worker's pubsub channel) waking
    every COMMANDS_WAKE seconds instead of RQ's 60. RQ stops that thread at shutdown and redis-py
    (8.x) waits for it to end; when the thread has already handled the UNSUBSCRIBE before being
    told to stop, it waits out its whole sleep first, so a SIGTERM to an idle worker could take a
    minute to end it."""

    def subscribe(self) -> None:
        self.pubsub = self.connection.pubsub()
        self.pubsub.subscribe(**{self.pubsub_channel_name: self.handle_payload})
        self.pubsub_thread = self.pubsub.run_in_thread(
            sleep_time=COMMANDS_WAKE, daemon=True, exception_handler=self._pubsub_exception_handler
        )


def run_worker(
    settings: Settings,
    burst: bool = False,
    name: str | None = None,
    metrics_port: int | None = None,
    json_logs: bool = True,
) -> bool:
    """Work jobs until stopped (or, with `burst`, until the queue is empty).

    A SimpleWorker runs jobs in this process: clients are built once and reused, and if this
    process dies, its job dies with it (and is resumed by recovery) instead of living on as an
    orphaned work horse.
    """
    logs.configure("INFO", json_lines=json_logs)
    warm_up()
    ctx = EngineContext.from_settings(settings)
    context.install(ctx)
    if metrics_port:
        metrics.serve(metrics_port, ctx.redis, ctx.store.active)
    resume_orphans(ctx)
    sweeps = [
        Periodic(
            "joinops-recovery",
            max(1.0, settings.timeouts.lock.total_seconds() / 2),
            lambda: recovery_pass(ctx),
        ).start(),
        Periodic("joinops-expiry", expiry.SWEEP_SECONDS, lambda: expiry.sweep(ctx)).start(),
        Periodic(
            "joinops-rechecks", RECHECK_SWEEP, lambda: sweep_rechecks(ctx.redis, settings)
        ).start(),
    ]
    worker = _Worker(
        [CHECKS_QUEUE, QUEUE],  # the bot's checks first: someone waits for each, briefly
        connection=ctx.redis,
        name=name or f"joinops-{os.uname().nodename}-{os.getpid()}",
    )
    try:
        return bool(worker.work(burst=burst, with_scheduler=True, logging_level="WARNING"))
    finally:
        for sweep in sweeps:
            sweep.stop()
