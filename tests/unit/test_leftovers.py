"""The check that nothing outlives its test (tests/support/leftovers.py) fails a test that leaves
a thread, a child process or a listening socket behind, naming it, and passes one that stops
what it started. Each case runs in a pytest of its own (a subprocess), so what it leaves dies
with that process."""

from __future__ import annotations

import pytest

CONFTEST = """
pytest_plugins = ["tests.support.leftovers"]


def pytest_configure(config):
    from tests.support import leftovers

    leftovers.GRACE = 0.5  # what is left here stays: no need to wait for it to end
"""

CASES = """
import socket
import subprocess
import sys
import threading

import pytest

stop = threading.Event()


def test_leaves_a_thread():
    threading.Thread(target=stop.wait, name="forgotten-poller", daemon=True).start()


def test_leaves_a_process():
    pytest.leaked_process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


def test_leaves_a_listening_socket():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    pytest.leaked = server


def test_stops_what_it_started():
    done = threading.Event()
    thread = threading.Thread(target=done.wait, name="stopped-in-time")
    thread.start()
    done.set()
    thread.join()


@pytest.fixture(scope="module")
def module_server():
    event = threading.Event()
    thread = threading.Thread(target=event.wait, name="module-server", daemon=True)
    thread.start()
    yield
    # never stopped: the module's fixtures leave it behind


def test_uses_the_module_server(module_server):
    pass


def test_releases_at_the_end():
    stop.set()
    pytest.leaked_process.kill()
    pytest.leaked_process.wait()
    pytest.leaked.close()
"""


@pytest.fixture
def outcome(pytester: pytest.Pytester) -> pytest.RunResult:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_cases=CASES)
    # rootdir's `tests` package must be importable from the temporary directory
    return pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:xdist", "-o", f"pythonpath={_root()}"
    )


def _root() -> str:
    from pathlib import Path

    return str(Path(__file__).resolve().parents[2])


def test_what_a_test_or_a_module_leaves_behind_fails_it_by_name(outcome):
    outcome.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_leaves_a_thread*",
            "this test left behind: thread 'forgotten-poller' (daemon, target Event.wait)",
            "*ERROR at teardown of test_leaves_a_process*",
            "this test left behind: child process *time.sleep(60)",
            "*ERROR at teardown of test_leaves_a_listening_socket*",
            "this test left behind: listening socket 127.0.0.1:*",
            "*ERROR at teardown of test_releases_at_the_end*",
            "the fixtures of test_cases.py left behind: thread 'module-server'*",
        ]
    )
    assert outcome.parseoutcomes()["errors"] == 4  # at teardown: the tests' bodies passed


def test_tests_that_stop_what_they_start_pass(outcome):
    assert outcome.parseoutcomes()["passed"] == 6
    blamed = "\n".join(line for line in outcome.outlines if "left behind" in line)
    assert "stops_what_it_started" not in blamed and "stopped-in-time" not in blamed
