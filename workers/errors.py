"""The two kinds of step failure (after kopf): stop and tell, or try again later."""

from __future__ import annotations


class PermanentError(Exception):
    """The step cannot succeed by retrying: stop the migration and tell the operator why.

    `where`: where the node is and what to do, when the step knows it better than the runner
    (a node that joined but cannot run pods)."""

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__(message)
        self.where = where


class TemporaryError(Exception):
    """The step may succeed later (a lock, a 5xx): the runner retries it after `delay` seconds."""

    def __init__(self, message: str, delay: float = 2.0) -> None:
        super().__init__(message)
        self.delay = delay


class LockLost(Exception):
    """This run's locks expired (Redis was away longer than their ttl): another run may own the
    request now, so this one stops without touching anything more."""


class Cancelled(Exception):
    """The request was cancelled while a step ran; undo what was done."""


class Waiting(Exception):
    """The step waits for a change in a cluster (pods to go, the node to join): the runner
    releases the worker, keeps the locks and schedules a re-check of the same step in `seconds`."""

    def __init__(self, what: str, seconds: float) -> None:
        super().__init__(what)
        self.seconds = seconds
