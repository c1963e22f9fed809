"""Where a `/join` that asks for something is typed: requests are posted there for the
approvers, so a direct message or a group direct message (where the bot cannot post, and no
approver would see it) is answered at the ack with what to do, before any check is asked."""

from __future__ import annotations

import pytest

from slacksim.signing import deliver, slash_command_body
from tests.bot.harness import REQUESTER, SECRET, ack_text


@pytest.mark.parametrize(
    ("channel_id", "channel_name", "where"),
    [
        ("D0DIRECT01", "directmessage", "a direct message"),
        ("G0GROUPDM1", "mpdm-ann--bob--cid-1", "a group direct message"),
    ],
)
def test_a_request_typed_in_a_dm_is_answered_at_the_ack(bot, channel_id, channel_name, where):
    rid = "dm-ask"
    url = bot.sim.response_url(rid, channel=channel_id, user=REQUESTER)
    body = slash_command_body(
        text="a-w-1 from clusterA to clusterB",
        user_id=REQUESTER,
        channel_id=channel_id,
        channel_name=channel_name,
        response_url=url,
    )
    delivery = deliver(bot.events_url, body, SECRET)
    answer = ack_text(delivery)
    assert f"{where} is no place for that: nothing was asked" in answer
    assert "in a channel where I am" in answer
    assert bot.sim.calls_to("chat.postMessage") == [] and bot.ctx.store.recent(5) == []
    assert bot.sim.responses(rid) == []  # no "Checking…" work followed the ack
