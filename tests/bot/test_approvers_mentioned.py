"""A request's message mentions the approvers — users as `<@U…>`, user groups as
`<!subteam^S…>` — in its notification text and its status line while it waits for them, so
Slack notifies them; once decided, the status line names nobody."""

from __future__ import annotations

from tests.bot.harness import APPROVER, APPROVER2, GROUP, REQUESTER, text_of

MENTIONS = f"<@{APPROVER}>, <@{APPROVER2}>, <!subteam^{GROUP}>"


def test_a_single_request_mentions_the_approvers_until_it_is_decided(bot):
    bot.slash("a-w-1 from clusterA to clusterB")
    message = bot.wait_message()
    request = bot.request_from_message(message)
    assert message["text"] == (
        f"<@{REQUESTER}> asks to move `a-w-1` from clusterA to clusterB. Approvers: {MENTIONS}."
    )
    assert f"Waiting for an approver ({MENTIONS}); expires at" in text_of(message)

    bot.click("join_reject", request.id, APPROVER)
    root = bot.wait_root(request.id, lambda t: "Rejected by" in t)
    assert "<!subteam^" not in text_of(root) and "Approvers:" not in root["text"]


def test_a_batch_request_mentions_the_approvers(bot):
    bot.slash("a-w-1 a-w-2 from clusterA to clusterB")
    message = bot.wait_message()
    assert message["text"].endswith(
        f"asks to move 2 nodes from clusterA to clusterB. Approvers: {MENTIONS}."
    )
    assert f"Waiting for an approver ({MENTIONS}); expires at" in text_of(message)


def test_an_ignition_request_mentions_the_approvers(bot):
    bot.slash("ignition clusterB")
    message = bot.wait_message(timeout=20)
    assert message["text"].endswith(f"Approvers: {MENTIONS}.")
    assert f"Waiting for an approver ({MENTIONS})" in text_of(message)


def test_without_approvers_configured_nobody_is_mentioned(make_bot):
    bot = make_bot(approvers=[], requesters={"users": [REQUESTER]})
    bot.slash("a-w-1 from clusterA to clusterB")
    message = bot.wait_message()
    assert "Approvers:" not in message["text"]
    assert "Waiting for an approver; expires at" in text_of(message)
