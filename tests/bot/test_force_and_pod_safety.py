"""Pod safety in Slack: the refusal names the pods; `force` is shown and confirmed on Approve."""

from __future__ import annotations

from joinops.requests.audit import Action, AuditLog
from tests.bot.harness import STRANGER, text_of, until


def approve_button(message: dict) -> dict:
    return next(
        e
        for block in message["blocks"]
        if block["type"] == "actions"
        for e in block["elements"]
        if e["action_id"] == "join_approve"
    )


def test_a_bare_pod_refuses_the_request_and_says_how_to_force(bot, world):
    world.cluster("clusterA").add_pod("a-w-1", "debug", namespace="tools")
    bot.slash("a-w-1 from clusterA to clusterB")
    shown = text_of(bot.wait_message())
    assert shown.startswith("Refused: move")
    assert "`tools/debug`" in shown
    assert "nothing would ever recreate them" in shown and "the word `force`" in shown
    assert bot.ctx.store.recent(10) == []


def test_force_is_shown_and_the_approve_button_confirms_the_deletions(bot, world):
    a = world.cluster("clusterA")
    a.add_pod("a-w-1", "debug", namespace="tools")
    a.add_pod("a-w-1", "scratch", namespace="tools")
    bot.slash("a-w-1 from clusterA to clusterB force")
    message = bot.wait_message()
    request = bot.request_from_message(message)
    shown = text_of(message)
    assert "*Forced*" in shown and "the drain deletes pods no controller will recreate" in shown
    assert "deletes 2 pods no controller will recreate: `tools/debug`, `tools/scratch`" in shown
    confirm = approve_button(message)["confirm"]
    assert confirm["title"]["text"] == "Approve and delete 2 pods no controller will recreate?"
    assert confirm["confirm"]["text"] == "Approve and delete"
    assert request.force
    # the audit's entry follows the request's record
    requested = until(
        lambda: [e for e in AuditLog(bot.redis).entries() if e.action is Action.REQUESTED], 30
    )
    assert [e.force for e in requested] == [True]


def test_force_on_several_nodes_is_confirmed_for_the_whole_batch(bot, world):
    world.cluster("clusterA").add_pod("a-w-2", "debug", namespace="tools")
    bot.slash("a-w-1 a-w-2 from clusterA to clusterB FORCE")
    message = bot.sim.wait_for(
        lambda: next((m for m in bot.messages() if "join_approve" in str(m)), None)
    )
    assert "*Forced*" in text_of(message)
    confirm = approve_button(message)["confirm"]
    assert confirm["title"]["text"] == "Approve and delete 1 pod no controller will recreate?"


def test_emptydir_warns_in_the_request_message(bot, world):
    world.cluster("clusterA").add_pod("a-w-1", "cache-0", owner_kind="ReplicaSet", empty_dir=True)
    bot.slash("a-w-1 from clusterA to clusterB")
    shown = text_of(bot.wait_message())
    assert ":warning:" in shown and "`default/cache-0`" in shown
    assert "emptyDir data is lost" in shown


def test_force_from_someone_not_allowed_to_request_gets_the_usual_refusal(make_bot, world):
    world.cluster("clusterA").add_pod("a-w-1", "debug", namespace="tools")
    guarded = make_bot(requesters={"users": ["USOMEONE01"]})
    _, rid = guarded.slash("a-w-1 from clusterA to clusterB force", user=STRANGER)
    # the approvers' group is not listed yet: the refusal follows the ack
    assert "You may not use `/join`: only the configured requesters may" in guarded.wait_answer(rid)
    assert guarded.sim.calls_to("chat.postMessage") == []
    assert guarded.ctx.store.recent(10) == []
