"""The project's own error tree.

Refusals (a rule said no) are not errors: they are findings (see `findings.py`). Errors are
things that broke; each boundary turns what it caught into one of these, chained with `from`.
"""

from __future__ import annotations


class JoinopsError(Exception):
    """Base of every error joinops raises on purpose."""


class ConfigError(JoinopsError):
    """The configuration is wrong; one line per problem."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


class UsageError(JoinopsError):
    """The user typed something that cannot be acted on (unknown cluster, bad name...)."""


class ClusterError(JoinopsError):
    """A Kubernetes API call failed. `cluster` names the cluster it was made against."""

    def __init__(self, cluster: str, message: str) -> None:
        super().__init__(f"{cluster}: {message}")
        self.cluster = cluster
        self.detail = message


class ClusterUnreachable(ClusterError):
    """Connection refused, timed out, TLS failure, or a 5xx: the API did not answer usefully."""


class ClusterForbidden(ClusterError):
    """401/403: the credentials lack a permission. Names the verb and resource."""

    def __init__(self, cluster: str, verb: str, resource: str, message: str) -> None:
        super().__init__(cluster, message)
        self.verb = verb
        self.resource = resource


class ClusterNotFound(ClusterError):
    """404 for an object joinops expected to exist."""


class ClusterConflict(ClusterError):
    """409: stale resourceVersion, or an object that already exists."""


class ClusterInvalid(ClusterError):
    """422: the API server rejected an object joinops sent (a bug, or a policy)."""


class ClusterRateLimited(ClusterError):
    """429 that is not a disruption budget, still answered after the client's retries (each
    after the server's Retry-After: `clusters/retry_after.py`)."""


class ClusterExpired(ClusterError):
    """410 Gone: a resourceVersion or a list's continue token older than the server keeps (etcd
    compacted past it). Read again from the start (`clusters/pages.py`, `clusters/watches.py`)."""


class NoWorkerAnswered(JoinopsError):
    """A check the bot asked of the workers was not answered in time: no worker is running, or
    all are busy."""

    def __init__(self, seconds: int) -> None:
        super().__init__(f"no worker answered within {seconds} s")
        self.seconds = seconds


class WorkerFailed(JoinopsError):
    """A check asked of the workers broke there (a bug: the worker's log has the traceback)."""

    def __init__(self, function: str, last_line: list[str]) -> None:
        super().__init__(f"{function} failed on a worker: {' '.join(last_line) or 'no detail'}")
