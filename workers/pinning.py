"""One step, one set of cluster clients.

Each step starts on clients built from the kubeconfig files as they are then, and keeps them to
its end: a file rewritten while a step runs takes effect at the next step. A file rewritten into
something unusable fails the step before it acts, naming the file.
"""

from __future__ import annotations

from dataclasses import replace

from joinops.errors import ConfigError
from workers.errors import PermanentError
from workers.run import Run


def pin_step_clusters(run: Run) -> None:
    """Point the run at fixed clients for its source and target (and any other it asks for)."""
    names = [run.request.source, run.request.target]
    try:
        pinned = run.ctx.clusters.pinned(names)
    except ConfigError as e:
        raise PermanentError(str(e)) from e
    run.ctx = replace(run.ctx, clusters=pinned)
