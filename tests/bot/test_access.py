"""Authorisation in front of every command and click (bot/access.py): who may ask, where, who
may decide. Every refusal is ephemeral, says what is missing and whom to ask, changes nothing
and is in the audit trail."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from slack_sdk import WebClient

from bot.authz import GroupMembers, lookup_client
from joinops.requests.audit import Action, AuditLog
from joinops.requests.lifecycle import State
from slacksim.signing import block_actions_body, deliver, slash_command_body
from tests.bot.harness import (
    APPROVER,
    APPROVER2,
    CHANNEL,
    GROUP,
    GROUP_MEMBER,
    REQUESTER,
    SECRET,
    STRANGER,
    ack_text,
    buttons,
    until,
)

REQUESTER_GROUP = "S0REQUESTERS"
GROUP_REQUESTER = "UREQGROUP01"
OTHER_CHANNEL = "C0ELSEWHERE"
ASK = "a-w-1 from clusterA to clusterB"
APPROVERS_SHOWN = f"<@{APPROVER}>, <@{APPROVER2}>, <!subteam^{GROUP}>"


@pytest.fixture
def guarded(make_bot, sim):  # type: ignore[no-untyped-def]
    sim.usergroups[REQUESTER_GROUP] = [GROUP_REQUESTER]
    return make_bot(
        requesters={"users": [REQUESTER], "groups": [REQUESTER_GROUP], "channels": [CHANNEL]}
    )


def _denied(bot) -> list:  # type: ignore[no-untyped-def]
    return [e for e in AuditLog(bot.redis).entries() if e.action is Action.DENIED]


def test_someone_not_among_the_requesters_is_refused_and_nothing_is_asked(guarded):
    # The groups' members are not known yet: the ack waits on no lookup, the refusal follows.
    lookup = guarded.sim.holds.add("usergroups.users.list")  # Slack slow to list a group
    delivery, rid = guarded.slash(ASK, user=STRANGER)
    assert delivery.status == 200  # acknowledged while the lookup it needs is unanswered
    assert delivery.json()["response_type"] == "ephemeral"
    lookup.wait_arrived()
    assert guarded.sim.responses(rid) == []  # the refusal waits for the lookup, not the ack
    lookup.release()
    answer = guarded.wait_answer(rid)
    assert "You may not use `/join`: only the configured requesters may" in answer
    assert f"Ask {APPROVERS_SHOWN} to add you, or to ask for you." in answer
    assert "Nothing was recorded." in answer
    # Now they are: the refusal is the ack itself.
    for other in ("list", "clusters", "status", "cancel req-00000000", "nonsense words"):
        refused, other_rid = guarded.slash(other, user=STRANGER)
        assert "only the configured requesters may" in ack_text(refused), other
        assert guarded.sim.responses(other_rid) == [], other  # nothing ran after the ack
    assert "moves Kubernetes nodes" in ack_text(guarded.slash("help", user=STRANGER)[0])

    assert guarded.sim.calls_to("chat.postMessage") == []
    assert guarded.ctx.store.recent(10) == []
    assert len(guarded.sim.responses(rid)) == 1  # the refusal, and no "Checking…" work after it
    until(lambda: len(_denied(guarded)) == 6, 10)  # recorded after the acks
    denied = _denied(guarded)
    assert {e.actor for e in denied} == {STRANGER}
    first = next(e for e in denied if e.node)
    assert (first.node, first.source, first.target, first.role) == (
        "a-w-1",
        "clusterA",
        "clusterB",
        "worker",
    )
    assert {e.detail for e in denied} == {"/join: not a requester"}


def test_listed_users_group_members_and_approvers_may_ask(guarded):
    for user, node in ((REQUESTER, "a-w-1"), (GROUP_REQUESTER, "a-w-2"), (APPROVER, "taken")):
        delivery, _ = guarded.slash(f"{node} from clusterA to clusterB", user=user)
        assert "Checking" in ack_text(delivery), user
    guarded.sim.wait_for(lambda: len(guarded.messages()) == 3)
    assert _denied(guarded) == []
    assert len(guarded.sim.calls_to("usergroups.users.list")) == 1  # only for the group member
    guarded.slash("status", user=GROUP_REQUESTER)
    assert len(guarded.sim.calls_to("usergroups.users.list")) == 1  # remembered


def test_requests_only_in_the_listed_channels(guarded):
    url = guarded.sim.response_url("elsewhere", channel=OTHER_CHANNEL, user=REQUESTER)
    body = slash_command_body(
        text=ASK, user_id=REQUESTER, channel_id=OTHER_CHANNEL, response_url=url
    )
    delivery = deliver(guarded.events_url, body, SECRET)
    answer = ack_text(delivery)
    assert f"`/join` works only in <#{CHANNEL}>, not here." in answer
    assert guarded.sim.calls_to("chat.postMessage") == []
    denied = until(lambda: _denied(guarded), 10)  # recorded after the ack
    assert denied[0].detail == f"/join: channel {OTHER_CHANNEL} not allowed"


def test_a_group_slack_cannot_list_grants_nothing_and_says_so(guarded):
    guarded.sim.faults.add("usergroups.users.list", status=500, times=2)
    lookup = guarded.sim.holds.add("usergroups.users.list")  # and the first failure held
    delivery, rid = guarded.slash(ASK, user=GROUP_REQUESTER)
    assert delivery.status == 200  # acknowledged while the lookup has not even failed yet
    lookup.wait_arrived()
    assert guarded.sim.responses(rid) == []
    lookup.release()
    answer = guarded.wait_answer(rid)
    assert f"I could not check whether you are in <!subteam^{REQUESTER_GROUP}>" in answer
    assert "Try again in a minute" in answer
    assert guarded.sim.calls_to("chat.postMessage") == []
    # not remembered: once Slack answers again, so does the bot
    assert "Checking" in ack_text(guarded.slash(ASK, user=GROUP_REQUESTER)[0])
    guarded.wait_message()


def test_only_approvers_click_and_the_refusal_names_them(bot):
    bot.slash(ASK)
    request = bot.request_from_message(bot.wait_message())
    lookup = bot.sim.holds.add("usergroups.users.list")  # the approvers' group, not yet listed
    delivery, rid = bot.approve(request.id, STRANGER)
    # acknowledged while the lookup that decides the click is unanswered; the refusal follows
    assert delivery.status == 200 and delivery.body == b""
    lookup.wait_arrived()
    assert bot.sim.responses(rid) == []
    lookup.release()
    answer = bot.wait_answer(rid)
    assert "you are not one of them. Nothing changed." in answer
    assert f"The approvers are {APPROVERS_SHOWN}." in answer
    assert bot.sim.responses(rid)[0]["response_type"] == "ephemeral"
    _, rid = bot.click("join_reject", request.id, REQUESTER)
    assert "you are not one of them" in bot.wait_answer(rid)

    assert bot.request(request.id).state is State.PENDING
    assert buttons(bot.root(request.id)) and bot.jobs() == []
    denied = _denied(bot)
    assert [(e.actor, e.detail) for e in denied] == [
        (STRANGER, "approve: not an approver"),
        (REQUESTER, "reject: not an approver"),
    ]
    assert all(e.request_id == request.id and e.node == "a-w-1" for e in denied)
    assert denied[0].source == "clusterA" and denied[0].target == "clusterB"

    bot.approve(request.id, GROUP_MEMBER)
    bot.wait_root(request.id, lambda t: f"Approved by <@{GROUP_MEMBER}>" in t)


def test_requesters_do_not_make_approvers(guarded):
    guarded.slash(ASK)
    request = guarded.request_from_message(guarded.wait_message())
    _, rid = guarded.approve(request.id, GROUP_REQUESTER)
    assert "you are not one of them" in guarded.wait_answer(rid)
    assert guarded.request(request.id).state is State.PENDING


def test_a_burst_of_clicks_is_acked_at_once_and_lists_the_group_once(bot):
    bot.slash(ASK)
    request = bot.request_from_message(bot.wait_message())
    held = bot.sim.holds.add("usergroups.users.list")  # Slack slow to list the approvers' group
    with ThreadPoolExecutor(10) as pool:
        clicks = list(pool.map(lambda _: bot.approve(request.id, GROUP_MEMBER), range(10)))
    held.wait_arrived()
    # every click was acknowledged while the one lookup they all need was still unanswered
    assert all(d.status == 200 and d.body == b"" for d, _ in clicks)
    held.release()
    bot.wait_root(request.id, lambda t: f"Approved by <@{GROUP_MEMBER}>" in t)

    # one click approved it (and needs no answer); each of the nine others is told so
    def answered() -> list[str]:
        return [bot.answers(rid)[-1] for _, rid in clicks if bot.answers(rid)]

    until(lambda: len(answered()) == 9, 10)
    assert all("was already approved" in answer for answer in answered()), answered()
    assert len(bot.sim.calls_to("usergroups.users.list")) == 1
    assert bot.request(request.id).state is not State.PENDING


def test_a_group_in_use_is_listed_again_in_the_background_before_it_expires(sim):
    now = [0.0]
    client = lookup_client(WebClient(token=sim.token, base_url=sim.api_url))
    members = GroupMembers(client, ttl=60, clock=lambda: now[0])
    assert members.known(GROUP) is None  # never listed: an ack cannot decide from memory
    assert members.known_member_of(GROUP_MEMBER, [GROUP]) is None
    assert sim.calls_to("usergroups.users.list") == []  # and asking from memory called nobody
    assert members.of(GROUP) == {GROUP_MEMBER}

    sim.usergroups[GROUP] = [GROUP_MEMBER, APPROVER2]
    now[0] = 50.0  # past 80% of the ttl: still used, and listed again meanwhile
    assert members.known_member_of(GROUP_MEMBER, [GROUP]) is True
    until(lambda: len(sim.calls_to("usergroups.users.list")) == 2, 10)
    until(lambda: members.known(GROUP) == {GROUP_MEMBER, APPROVER2}, 10)
    now[0] = 100.0  # 50 s after the refresh: still known, from memory
    assert members.known_member_of(APPROVER2, [GROUP]) is True
    now[0] = 200.0  # not used for longer than the ttl: unsettled again
    assert members.known(GROUP) is None


def test_a_click_on_a_message_inside_a_thread_is_answered_in_that_thread(guarded):
    """Slack posts a response_url answer where `thread_ts` says; without it, at the channel's
    root, far from the button that was clicked."""
    rid = "thread-click"
    url = guarded.sim.response_url(rid, channel=CHANNEL, user=STRANGER, message_ts="200.000002")
    reply = {"type": "message", "ts": "200.000002", "thread_ts": "100.000001", "text": ""}
    body = block_actions_body(
        action_id="join_cancel",
        value="req-00000000",
        user_id=STRANGER,
        message_ts="200.000002",
        response_url=url,
        message=reply,
    )
    assert deliver(guarded.events_url, body, SECRET).status == 200
    answer = until(lambda: guarded.sim.responses(rid), 30)[0]
    assert "only the configured requesters may" in answer["text"]
    assert answer["thread_ts"] == "100.000001"
