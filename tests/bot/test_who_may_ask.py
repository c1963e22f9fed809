"""Guests, other organisations' members and deactivated accounts (bot/people.py): refused for
every command and button by default, allowed only when the configuration says so, decided from
Slack's own `users.info` after the ack, and never allowed when Slack cannot say.

slacksim's `users.info` answers a synthesised member of the installing team, overlaid per test
(`sim.users[id]`), with Slack's fields: `is_restricted` (multi-channel guest),
`is_ultra_restricted` (single-channel guest), `team_id` (a Slack Connect member's own team),
`deleted`.
"""

from __future__ import annotations

from joinops.requests.audit import Action, AuditLog
from joinops.requests.lifecycle import State
from tests.bot.harness import APPROVER, REQUESTER, ack_text, until

GUEST = "U0GUEST0001"
OUTSIDER = "U0OUTSIDE01"
ASK = "a-w-1 from clusterA to clusterB"


def _denied(bot) -> list:  # type: ignore[no-untyped-def]
    return [e for e in AuditLog(bot.redis).entries() if e.action is Action.DENIED]


def test_a_guest_is_refused_privately_and_nothing_is_asked(make_bot, sim):
    sim.users[GUEST] = {"is_restricted": True}
    bot = make_bot()  # no requesters configured: every full member may ask
    delivery, rid = bot.slash(ASK, user=GUEST)
    assert delivery.status == 200 and delivery.json()["response_type"] == "ephemeral"
    answer = bot.wait_answer(rid)
    assert "joinops is not available to guests of this workspace" in answer
    assert "Nothing was recorded." in answer
    assert bot.sim.calls_to("chat.postMessage") == [] and bot.ctx.store.recent(10) == []
    assert "moves Kubernetes nodes" in ack_text(bot.slash("help", user=GUEST)[0])
    until(lambda: any(e.actor == GUEST for e in _denied(bot)), 10)


def test_a_single_channel_guest_and_a_slack_connect_member_are_refused(make_bot, sim):
    sim.users[GUEST] = {"is_ultra_restricted": True}
    sim.users[OUTSIDER] = {"team_id": "T0OTHERORG"}
    bot = make_bot()
    _, guest = bot.slash("list", user=GUEST)
    _, outsider = bot.slash(ASK, user=OUTSIDER)
    assert "not available to guests" in bot.wait_answer(guest)
    assert "members of other organisations (Slack Connect)" in bot.wait_answer(outsider)
    assert bot.sim.calls_to("chat.postMessage") == []


def test_allowed_explicitly_they_may_ask(make_bot, sim):
    sim.users[OUTSIDER] = {"team_id": "T0OTHERORG", "is_restricted": True}
    bot = make_bot(access={"allow_guests": True, "allow_external": True})
    bot.slash(ASK, user=OUTSIDER)
    message = bot.wait_message()
    assert bot.request_from_message(message).requester == OUTSIDER


def test_a_guest_approver_cannot_approve(make_bot, sim):
    sim.users[APPROVER] = {"is_restricted": True}
    bot = make_bot()
    bot.slash(ASK, user=REQUESTER)
    request = bot.request_from_message(bot.wait_message())
    _, rid = bot.approve(request.id, APPROVER)
    assert "not available to guests" in bot.wait_answer(rid)
    assert bot.request(request.id).state is State.PENDING


def test_when_slack_cannot_say_who_it_is_the_answer_is_no(make_bot, sim):
    bot = make_bot()
    sim.faults.add("users.info", error="user_not_found", times=1)
    _, rid = bot.slash(ASK, user=REQUESTER)
    assert "I could not check your account with Slack" in bot.wait_answer(rid)
    assert bot.sim.calls_to("chat.postMessage") == []


def test_an_ignition_file_goes_only_to_someone_slack_still_calls_a_member(bot, sim):
    """Asked as a member; made a guest before the file was delivered: it is not sent."""
    bot.start_worker()  # makes the file
    bot.slash("ignition clusterB")
    request = bot.request_from_message(bot.wait_message(timeout=20))
    sim.users[REQUESTER] = {"is_restricted": True}  # after the ask, before the delivery
    bot.approve(request.id)
    replies = bot.wait_thread(
        request.id, lambda r: bool(r) and r[-1].startswith(":red_circle:"), timeout=60
    )
    assert "made but not delivered" in replies[-1]
    assert "no longer a full member's (guest) as Slack says now" in replies[-1]
    assert sim.uploads == [] and sim.calls_to("conversations.open") == []
