"""`joinops plan` on names: a node joinops moved already, a mistyped node, a mistyped cluster.

Through the real client against kubesim; the move itself is the real engine's.
"""

from __future__ import annotations

import json
import re

import pytest

from cli import main
from joinops.requests.lifecycle import State
from tests.support.engine import approved_request
from workers.runner import run_request


def plan(capsys, *argv: str) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    code = main(["plan", *argv])
    return code, capsys.readouterr().out


def test_a_node_joinops_moved_is_already_there_and_never_to_be_deleted(
    configured, make_ctx, capsys
):
    ctx = make_ctx()
    moved = approved_request(ctx, "a-w-1", "clusterA", "clusterB")
    assert run_request(ctx, moved.id) is State.SUCCEEDED

    code, out = plan(capsys, "a-w-1", "--from", "clusterA", "--to", "clusterB")
    assert code == 1
    said = re.search(
        rf"REFUSED: `a-w-1` is already in clusterB \(moved by {moved.id} at "
        r"\d{4}-\d\d-\d\d \d\d:\d\d UTC\): nothing to move\.",
        out,
    )
    assert said, out
    assert "kubectl delete" not in out and "remove the old" not in out
    assert "Did you mean" not in out  # not a typo: the node is where it was sent
    assert out.count("REFUSED:") == 2  # the headline and that one reason

    # the other way round it is an ordinary move, back
    code, out = plan(capsys, "a-w-1", "--from", "clusterB", "--to", "clusterA")
    assert code == 0, out


def test_a_name_taken_by_another_node_in_the_target_says_to_remove_that_one(configured, capsys):
    code, out = plan(capsys, "taken", "--from", "clusterA", "--to", "clusterB")
    assert code == 1
    assert "remove the old `taken` from clusterB first (`kubectl delete node taken`)" in out


def test_a_name_only_in_the_target_is_never_to_be_deleted(configured, capsys):
    code, out = plan(capsys, "b-w-1", "--from", "clusterA", "--to", "clusterB", "--json")
    verdict = json.loads(out)
    assert code == 1 and [f["code"] for f in verdict["findings"]] == ["node-missing"]
    text = verdict["findings"][0]["text"]
    assert "`b-w-1` is not a node of clusterA, and clusterB already has a node" in text
    assert "delete" not in text


@pytest.mark.parametrize(
    ("node", "said"),
    [
        ("a-w-11", "`a-w-11` is not a node of clusterA. Did you mean `a-w-1`?"),
        ("a-w-ol", "`a-w-ol` is not a node of clusterA. Did you mean `a-w-old`?"),
        (
            "web-7",
            "`web-7` is not a node of clusterA. Names must match exactly what `kubectl get "
            "nodes` shows in clusterA.",
        ),
    ],
)
def test_a_mistyped_node_gets_the_close_names_of_the_source(configured, capsys, node, said):
    code, out = plan(capsys, node, "--from", "clusterA", "--to", "clusterB")
    assert code == 1 and f"REFUSED: {said}" in out, out


@pytest.mark.parametrize(
    ("cluster", "said"),
    [
        ("clusterb", "unknown cluster 'clusterb'. Did you mean clusterB? Known clusters:"),
        # as close to clusterA as to clusterB and clusterC: no guess, the list
        ("clusterD", "unknown cluster 'clusterD'. Known clusters: clusterA, clusterB, clusterC"),
        ("prod", "unknown cluster 'prod'. Known clusters: clusterA, clusterB, clusterC, host-1"),
    ],
)
def test_an_unknown_cluster_gets_a_guess_only_when_one_is_clearly_meant(
    configured, capsys, cluster, said
):
    assert main(["plan", "a-w-1", "--from", "clusterA", "--to", cluster]) == 2
    assert said in capsys.readouterr().err
