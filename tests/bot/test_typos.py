"""A mistyped node in `/join` is an input error: answered to the person alone (Slack's ephemeral
response, as for any other typo), with the names meant; no request, no post in the channel."""

from __future__ import annotations

import pytest

from joinops.requests.audit import AuditLog
from tests.bot.harness import REQUESTER


@pytest.mark.parametrize(
    ("typed", "answer"),
    [
        (
            "a-w-11 from clusterA to clusterB",
            "`a-w-11` is not a node of clusterA. Did you mean `a-w-1`?",
        ),
        (
            "a-w-11 to clusterB",  # looked up in every cluster but the target
            "`a-w-11` is not a node of any configured cluster (looked in bare, clusterA, "
            "host-1). Did you mean `a-w-1`?",
        ),
        (
            "web-7 from clusterA to clusterB",
            "`web-7` is not a node of clusterA. Names must match exactly what `kubectl get nodes` "
            "shows in clusterA.",
        ),
    ],
)
def test_a_mistyped_node_is_answered_to_the_requester_alone(bot, typed, answer):
    _, response = bot.slash(typed, user=REQUESTER)
    said = bot.sim.wait_for(lambda: bot.sim.responses(response))[-1]
    assert said["response_type"] == "ephemeral"
    assert answer in str(said["text"])
    # the answer is the work's last act: had anything been posted or stored, it would be now
    assert bot.messages() == []
    assert bot.ctx.store.recent(10) == []
    assert list(AuditLog(bot.redis).entries()) == []
