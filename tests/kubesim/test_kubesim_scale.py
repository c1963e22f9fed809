"""A 10,000-node cluster stays quick to build, list and select from."""

from __future__ import annotations

import json

from kubernetes import client

from kubesim import NodeSpec, World


def test_ten_thousand_nodes() -> None:
    with World() as world:
        big = world.add_cluster("big", nodes=[NodeSpec("cp-1", role="control-plane")])
        big.add_nodes(10_000, prefix="w")  # how fast: bench/ (check_cost at 10,000 nodes)
        core = client.CoreV1Api(big.api_client())

        everything = core.list_node(_preload_content=False).data
        assert everything.count(b'"kind":"Node"') == 10_001

        control_planes = core.list_node(label_selector="node-role.kubernetes.io/control-plane")
        one = core.list_node(label_selector="kubernetes.io/hostname=w-5000")
        assert [n.metadata.name for n in control_planes.items] == ["cp-1"]
        assert [n.metadata.name for n in one.items] == ["w-5000"]

        page = core.list_node(limit=500)  # typed: every field the client requires is there
        assert len(page.items) == 500 and page.metadata.remaining_item_count == 9_501
        assert all(n.status.node_info.kubelet_version == "v1.31.4" for n in page.items)
        rest = json.loads(
            core.list_node(
                limit=10_000, _continue=page.metadata._continue, _preload_content=False
            ).data
        )
        assert "continue" not in rest["metadata"]
        names = [n.metadata.name for n in page.items] + [
            n["metadata"]["name"] for n in rest["items"]
        ]
        assert len(names) == len(set(names)) == 10_001
