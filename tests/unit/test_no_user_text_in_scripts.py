"""Nothing a person typed reaches a shell.

The only shell joinops starts is inside the pods it runs on nodes (`/bin/sh -c SCRIPT`): the
node agent and the certificate upload. Their scripts are constants plus a request id that
joinops generated; the node is chosen by the pod's `nodeName` (a validated DNS-1123 name, an API
field, never a command line), and the secrets arrive in a mounted Secret. Anything else offered
as an id is refused.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from joinops.requests.ids import is_request_id, new_request_id
from joinops.requests.model import node_name_problem
from workers import agent

NODE = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?(\.[a-z0-9]{1,8}){0,3}", fullmatch=True)
CONSTANT_PARTS = re.compile(r"req-[0-9a-f]{8}")


def _scripts(request_id: str) -> list[str]:
    return [agent.kubeadm_script(request_id), agent.ock_script(request_id)]


@settings(max_examples=200, database=None, deadline=None)
@given(st.text(max_size=40) | st.sampled_from(["req-1234567", "req-ABCDEF12", "req-1234abcd;x"]))
def test_a_script_takes_only_a_request_id(text: str) -> None:
    if is_request_id(text):
        assert all(text in script for script in _scripts(text))
        return
    for make in (agent.kubeadm_script, agent.ock_script):
        with pytest.raises(ValueError):
            make(text)


@settings(max_examples=100, database=None, deadline=None)
@given(NODE, st.sampled_from(["kubeadm", "ock"]))
def test_the_node_is_an_api_field_and_never_in_the_command(node: str, profile: str) -> None:
    assert node_name_problem(node) is None
    request_id = new_request_id()
    pod = agent.agent_pod(
        namespace="joinops-system",
        request_id=request_id,
        node=node,
        image="busybox",
        profile=profile,
        not_after=1_800_000_000,
    )
    assert pod["spec"]["nodeName"] == node
    (container,) = pod["spec"]["containers"]
    command = container["command"]
    assert command[:2] == ["/bin/sh", "-c"] and "args" not in container
    # the environment holds only the agent's deadline, a number joinops chose
    assert container["env"] == [{"name": agent.NOT_AFTER_ENV, "value": "1800000000"}]
    # the script with its one variable part taken out is the same for every request and node
    assert CONSTANT_PARTS.sub("ID", command[2]) == CONSTANT_PARTS.sub(
        "ID",
        agent.agent_pod(
            namespace="x",
            request_id="req-00000000",
            node="n",
            image="i",
            profile=profile,
            not_after=1,
        )["spec"]["containers"][0]["command"][2],
    )


@settings(max_examples=50, database=None, deadline=None)
@given(NODE, st.booleans())
def test_the_host_probes_are_constant_scripts_reading_the_secret(node: str, facts: bool) -> None:
    """What a probe checks (endpoint, ports, node-ip) comes from the mounted Secret's files."""
    assert node_name_problem(node) is None
    pod = agent.probe_pod(
        namespace="joinops-system", request_id=new_request_id(), node=node, image="b", facts=facts
    )
    (container,) = pod["spec"]["containers"]
    assert "env" not in container and "args" not in container
    script = CONSTANT_PARTS.sub("ID", container["command"][2])
    other = agent.probe_pod(
        namespace="x", request_id="req-00000000", node="n", image="i", facts=facts
    )["spec"]["containers"][0]["command"][2]
    assert script == CONSTANT_PARTS.sub("ID", other)


def test_the_certificate_upload_script_is_a_constant() -> None:
    pod = agent.upload_certs_pod(
        namespace="joinops-system", request_id=new_request_id(), node="cp-1", image="busybox"
    )
    script = pod["spec"]["containers"][0]["command"][2]
    assert script == agent.upload_certs_script()
    assert "$(cat /joinops/certificate-key)" in script  # the key from the mounted Secret
