"""`joinops status`, `list`, `cancel` and `retry` end to end: real worker, Redis, kubesim."""

from __future__ import annotations

import re

import pytest

from cli import main
from cli.follow import follow
from joinops.requests.lifecycle import State
from joinops.requests.store import RequestStore
from tests.cli.workers import config, start  # noqa: F401  (fixtures)

MOVE = ["migrate", "a-w-1", "--from", "clusterA", "--to", "clusterB", "--yes"]


def queued_id(out: str) -> str:
    found = re.search(r"Request (req-[0-9a-f]{8}) queued", out)
    assert found, out
    return found.group(1)


def test_list_status_and_cancel_before_a_worker_takes_it(world, config, capsys):  # noqa: F811
    assert main([*MOVE, "--no-follow"]) == 0
    rid = queued_id(capsys.readouterr().out)

    assert main(["list"]) == 0
    assert f"{rid} APPROVED: `a-w-1` clusterA -> clusterB as worker" in capsys.readouterr().out
    assert main(["status", rid]) == 0
    assert "asked by cli:" in capsys.readouterr().out

    assert main(["cancel", rid]) == 0
    assert f"Cancelled `{rid}` before it started: nothing was changed" in capsys.readouterr().out
    assert main(["status"]) == 0  # the latest request
    out = capsys.readouterr().out
    assert f"{rid} CANCELLED" in out and "`a-w-1` stays in clusterA" in out
    assert main(["list"]) == 0
    assert capsys.readouterr().out.strip() == "No active requests."
    assert main(["cancel", rid]) == 1
    said = capsys.readouterr().out
    assert re.search(rf"`{rid}` was cancelled already at \d{{4}}-\d\d-\d\d \d\d:\d\d", said), said
    assert "there is nothing to cancel" in said and " is cancelled" not in said
    assert not world.cluster("clusterA").node("a-w-1")["spec"].get("unschedulable")


def test_unreachable_cluster_at_check_then_retry_moves_the_node(
    world,
    config,  # noqa: F811
    start,  # noqa: F811
    capsys,
    redis_client,
):
    assert main([*MOVE, "--no-follow"]) == 0
    rid = queued_id(capsys.readouterr().out)
    world.cluster("clusterA").faults.add(reachable=False)  # away before the worker checks
    start()
    assert follow(redis_client, rid) == 1
    out = capsys.readouterr().out
    assert "Could not reach the clusters to check the move" in out
    assert "clusterA" in out and "rules no longer allow" not in out
    assert f"`joinops retry {rid}`" in out and "/join" not in out
    assert main(["status", rid]) == 0
    status = capsys.readouterr().out
    assert f"{rid} FAILED" in status and "[check] failed" in status and "/join" not in status

    world.cluster("clusterA").faults.add(reachable=True)
    assert main(["retry", rid]) == 0
    out = capsys.readouterr().out
    assert f"Retrying {rid}" in out and "SUCCEEDED: `a-w-1` moved from clusterA to clusterB" in out
    assert world.cluster("clusterB").node("a-w-1") is not None
    assert main(["retry", rid]) == 1
    assert "only a failed request can be retried" in capsys.readouterr().out
    assert main(["audit", "--json"]) == 0
    actions = [line for line in capsys.readouterr().out.splitlines() if '"retried"' in line]
    assert len(actions) == 1 and '"actor": "cli:' in actions[0]


def test_cancel_is_refused_once_the_node_agent_started(world, config, capsys, redis_client):  # noqa: F811
    assert main([*MOVE, "--no-follow"]) == 0
    rid = queued_id(capsys.readouterr().out)
    store = RequestStore(redis_client)  # where a worker is once it started the agent
    assert store.transition(rid, State.RUNNING)[0]
    store.update(rid, agent_started=True)
    assert main(["cancel", rid]) == 1
    assert f"Too late to cancel `{rid}`: the node agent has started" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            ["migrate", "a-w-1", "--from", "clusterA", "--to", "clusterB", "--as", "boss"],
            "'boss' is not a role; the roles are worker, control-plane",
        ),
        (["status", "42"], "'42' is not a request id: ids look like req-1a2b3c4d"),
        (["cancel", "req-XYZ"], "is not a request id"),
        (["retry"], "the following arguments are required: ID"),
        (["audit", "--since", "soon"], "'soon' is not a duration: use e.g. 90s"),
    ],
)
def test_bad_arguments_say_what_to_type(argv, said, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert said in err and "invalid" not in err and "Traceback" not in err


def test_an_unknown_request_id_says_what_to_type(config, capsys):  # noqa: F811
    assert main(["status", "req-00000000"]) == 2
    assert (
        "No request req-00000000: `joinops list` shows the active ones" in capsys.readouterr().err
    )
    assert main(["retry", "req-00000000"]) == 2


def test_cancel_a_batch_stops_its_nodes_and_status_lists_them(
    world,
    config,  # noqa: F811
    start,  # noqa: F811
    capsys,
    redis_client,
):
    argv = ["migrate", "a-w-1", "a-w-2", "--from", "clusterA", "--to", "clusterB", "--yes"]
    assert main([*argv, "--no-follow"]) == 0
    batch_id = queued_id(capsys.readouterr().out)
    assert main(["cancel", batch_id]) == 0
    assert f"Cancelling `{batch_id}`: 2 nodes not yet past" in capsys.readouterr().out
    start()  # the batch ends once it sees every node stopped
    assert follow(redis_client, batch_id) == 1
    assert main(["status", batch_id]) == 0
    out = capsys.readouterr().out
    assert out.count("CANCELLED: `a-w-") == 2
    assert world.cluster("clusterB").node("a-w-1") is None
    assert world.cluster("clusterB").node("a-w-2") is None
