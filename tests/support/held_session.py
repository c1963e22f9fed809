"""A test session that holds until it is killed: tests/unit/test_session_redis_ends.py runs it
in a pytest of its own (named on the command line, so collected though not named test_*)."""

from __future__ import annotations

import os
import signal
from pathlib import Path


def test_held_until_killed() -> None:
    Path(os.environ["JOINOPS_HELD_AT"]).write_text(os.environ["JOINOPS_TEST_REDIS_URL"])
    signal.pause()  # until the SIGKILL the outer test sends
