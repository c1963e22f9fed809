"""A click on a request message that comes before the bot has recorded the request.

Slack shows a message to the channel as soon as it has posted it, before its answer reaches
the bot; the bot records the request (with the message's ts) only once that answer is back. A
quick approver can therefore click while the record is not written yet. Such a click waits for
the record and is taken, instead of being told there is no such request (found under CPU load:
the approval then never happened and the request sat pending).
"""

from __future__ import annotations

import json
from typing import Any

from joinops.requests.lifecycle import State
from joinops.requests.store import Request
from slacksim.signing import CHANNEL_ID, block_actions_body, deliver
from tests.bot.harness import APPROVER, SECRET, buttons, until


def test_an_approval_clicked_before_the_request_is_recorded_is_taken(bot):
    seen: dict[str, Any] = {}

    def the_request_message(params: dict[str, Any]) -> bool:
        blocks = params.get("blocks")
        if not blocks:
            return False
        message = {"blocks": json.loads(blocks) if isinstance(blocks, str) else blocks}
        seen["request_id"] = buttons(message)[0][1]
        return True

    # Slack has the message (its buttons carry the request's id); the bot has not heard back
    post = bot.sim.holds.add("chat.postMessage", the_request_message)
    bot.slash("a-w-1 from clusterA to clusterB")
    post.wait_arrived(60)
    request_id = seen["request_id"]
    assert bot.ctx.store.get(request_id) is None  # not recorded yet: the click outruns it

    answer = bot.sim.response_url("early-click", channel=CHANNEL_ID, user=APPROVER)
    body = block_actions_body(
        action_id="join_approve",
        value=request_id,
        user_id=APPROVER,
        message_ts="",
        response_url=answer,
    )
    clicked = deliver(bot.events_url, body, SECRET)
    assert clicked.status == 200  # acked at once; the click's work waits for the record
    post.release()

    def decided() -> Request | None:
        request = bot.ctx.store.get(request_id)
        return request if request is not None and request.state is not State.PENDING else None

    assert until(decided, 60).state is State.APPROVED
    assert not any("There is no request" in a for a in bot.answers("early-click"))
