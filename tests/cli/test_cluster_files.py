"""Cluster access follows the kubeconfig files; the terminal's hint about a missing worker."""

from __future__ import annotations

import io
import threading

import pytest

from cli import follow as following
from cli import main, texts
from joinops.requests.events import EventKind
from joinops.requests.lifecycle import State
from kubesim import World
from tests.cli.workers import config, start  # noqa: F401  (fixtures)
from tests.support.clusters import add_standard_clusters
from tests.support.engine import approved_request
from workers.runner import run_request


def move(node: str) -> list[str]:
    return ["migrate", node, "--from", "clusterA", "--to", "clusterB", "--yes"]


def test_a_worker_started_before_a_kubeconfig_rotation_migrates_after_it(
    world,
    config,  # noqa: F811
    start,  # noqa: F811
    tmp_path,
    capsys,
):
    start()
    assert main(move("a-w-1")) == 0  # the worker has built its clients for these API servers
    with World(pod_grace_seconds=0.05, join_seconds=0.1) as rotated:
        add_standard_clusters(rotated)
        world.stop()  # the old API servers are gone; new ones, new CA, new credentials
        rotated.write_kubeconfig(tmp_path / "kubeconfig")  # rewritten in place, as a Secret is
        capsys.readouterr()
        assert main(move("a-w-2")) == 0
        assert "SUCCEEDED: `a-w-2` moved from clusterA to clusterB" in capsys.readouterr().out
        assert rotated.cluster("clusterB").node("a-w-2") is not None
        assert rotated.cluster("clusterA").node("a-w-2") is None


def test_a_kubeconfig_made_invalid_mid_run_fails_the_next_step_naming_it(world, make_ctx, tmp_path):
    kubeconfig = tmp_path / "kubeconfig"

    def break_the_file(event):  # type: ignore[no-untyped-def]
        if event.kind is EventKind.STEP_STARTED and event.step == "cordon":
            kubeconfig.write_text("clusters: [this is not a kubeconfig\n")

    ctx = make_ctx(hooks=[break_the_file])
    request = approved_request(ctx, "a-w-1", "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.FAILED
    steps = {e.step: e for e in ctx.reporter.events if e.kind is EventKind.STEP_SUCCEEDED}
    assert "cordon" in steps  # the running step finished on the clients it had
    failed = [e for e in ctx.reporter.events if e.kind is EventKind.STEP_FAILED]
    assert [e.step for e in failed] == ["drain"]  # the next one read the file
    assert str(kubeconfig) in failed[0].text and "clusters.clusterA" in failed[0].text
    outcome = ctx.store.get(request.id).outcome
    assert str(kubeconfig) in outcome and "Traceback" not in outcome
    a = world.cluster("clusterA")
    assert not a.node("a-w-1")["spec"].get("unschedulable")  # nothing half-done: uncordoned
    assert world.cluster("clusterB").node("a-w-1") is None


class Lines(io.StringIO):
    """Standard output that tells when the no-worker hint was printed."""

    def __init__(self) -> None:
        super().__init__()
        self.hinted = threading.Event()

    def write(self, text: str) -> int:
        if texts.NO_WORKER in text:
            self.hinted.set()
        return super().write(text)


def test_the_hint_appears_while_no_worker_took_the_job_and_only_once(
    world,
    config,  # noqa: F811
    start,  # noqa: F811
    monkeypatch,
):
    monkeypatch.setattr(following, "WAITING_HINT_AFTER", 1)
    out = Lines()
    monkeypatch.setattr("sys.stdout", out)
    result: list[int] = []
    migrate = threading.Thread(target=lambda: result.append(main(move("a-w-1"))))
    migrate.start()
    assert out.hinted.wait(30)
    start()
    migrate.join(60)
    assert result == [0]
    assert out.getvalue().count(texts.NO_WORKER) == 1


@pytest.mark.parametrize("quiet_seconds", [2.5])
def test_no_hint_during_a_long_quiet_step_of_a_running_worker(
    world,
    config,  # noqa: F811
    start,  # noqa: F811
    monkeypatch,
    capsys,
    quiet_seconds,
):
    monkeypatch.setattr(following, "WAITING_HINT_AFTER", 1)
    world.join_seconds = quiet_seconds  # wait-joined waits that long without a line
    start()
    assert main(move("a-w-1")) == 0
    out = capsys.readouterr().out
    assert "ok [wait-joined]" in out and texts.NO_WORKER not in out
