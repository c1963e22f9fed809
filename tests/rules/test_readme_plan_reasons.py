"""The README's "Run it" says why `joinops plan a-w-2 …` is refused in the sandbox: every reason
the plan really gives, run against the sandbox's own clusters and workloads."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli import main, sandbox_cmd, sandbox_workloads
from kubesim import NodeSpec, World
from tests.support.clusters import write_config

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def world() -> Iterator[World]:
    """The sandbox's clusterA and clusterB, as `joinops sandbox` builds them."""
    with World() as w:
        for name in ("clusterA", "clusterB"):
            version, endpoint, nodes = sandbox_cmd.SANDBOX_CLUSTERS[name]
            cluster = w.add_cluster(
                name,
                version=version,
                control_plane_endpoint=endpoint,
                nodes=[NodeSpec(n, role=role, kubelet_version=k) for n, role, k in nodes],
            )
            if name == "clusterA":
                with cluster.api_client() as api_client:
                    sandbox_workloads.create(api_client)
                    w.wait_for(lambda: sandbox_workloads.ready(api_client), timeout=60)
        yield w


def readme_sentence() -> str:
    """From `joinops plan a-w-2 …` to the end of its paragraph, on one line."""
    section = (ROOT / "README.md").read_text().split("## Run it", 1)[1].split("\n## ", 1)[0]
    paragraph = next((p for p in section.split("\n\n") if "`joinops plan a-w-2" in p), "")
    assert paragraph, "the README no longer says why plan a-w-2 is refused"
    return " ".join(paragraph[paragraph.index("`joinops plan a-w-2") :].split())


def test_the_readme_names_every_reason_plan_a_w_2_is_refused(world, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("JOINOPS_CONFIG", str(write_config(world, tmp_path)))
    assert main(["plan", "a-w-2", "--from", "clusterA", "--to", "clusterB", "--json"]) == 1
    verdict = json.loads(capsys.readouterr().out)
    refused = [f["text"] for f in verdict["findings"] if f["severity"] == "refusal"]
    sentence = readme_sentence()
    assert len(refused) == 2 and "two reasons" in sentence, (refused, sentence)
    assert any("`default/debug`" in text for text in refused)
    assert "bare pod" in sentence
    assert any("v1.30.9" in text and "2 minor releases behind" in text for text in refused)
    assert "v1.30.9, two minor releases behind clusterB's v1.32.2" in sentence
