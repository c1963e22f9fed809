"""A thread reply whose post went unanswered is posted once, in its place (bot/post_once.py).

slacksim holds the post on its way in (`sim.holds`): a Slack too slow, under load, to answer
before the client gives up (slack_sdk's own timeout, short here). Real Slack may then store the
message all the same, after the replies that follow it would have been posted — so nothing else
is posted in that thread until the reply is found in `conversations.replies`, or found missing.
The official client, over real HTTP, with the bot's retry policy.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.post_once import PostOnce
from bot.render.blocks import reply
from bot.slack_retry import TransientSlackErrors
from slacksim.server import SlackSim
from slacksim.tiers import Tiers

CHANNEL = "C0THREADS1"
GAVE_UP = 1  # seconds slack_sdk waits for an answer here (the bot's default is 10)


@pytest.fixture
def sim() -> Iterator[SlackSim]:
    with SlackSim(tiers=Tiers.off()) as running:
        yield running


@pytest.fixture
def client(sim: SlackSim) -> WebClient:
    return WebClient(
        token=sim.token,
        base_url=sim.api_url,
        timeout=GAVE_UP,
        retry_handlers=[TransientSlackErrors(budget=10)],
    )


def _texts(sim: SlackSim, root: str) -> list[str]:
    return [m["text"] for m in sim.thread(CHANNEL, root)]


def _post(poster: PostOnce, root: str, text: str) -> str:
    return poster.post(CHANNEL, root, text, reply(text))


def _held_post(sim: SlackSim, poster: PostOnce, root: str, text: str, let_go: str) -> str:
    """Post `text` while slacksim holds it; `let_go`: "release" once the bot looks for it
    (stored late), "drop" at once (never stored: the connection closes unanswered)."""
    held = sim.holds.add("chat.postMessage", lambda params: params.get("text") == text)
    with ThreadPoolExecutor(1) as pool:
        posting = pool.submit(_post, poster, root, text)
        held.wait_arrived()
        if let_go == "release":
            sim.wait_for_calls("conversations.replies")  # the client gave up, and looks
            held.release()  # Slack stores it now, after the client stopped waiting
        else:
            held.drop()
        return posting.result(timeout=60)


def test_a_reply_slack_stores_after_the_client_gave_up_is_found_not_posted_again(sim, client):
    root = client.chat_postMessage(channel=CHANNEL, text="root")["ts"]
    poster = PostOnce(client, look_every=0.05)
    _post(poster, root, "one")

    found = _held_post(sim, poster, root, "two", "release")
    _post(poster, root, "three")

    assert _texts(sim, root) == ["one", "two", "three"]  # each once, in order
    assert found == sim.thread(CHANNEL, root)[1]["ts"]
    assert len(sim.calls_to("chat.postMessage")) == 4  # the root, one, two (late), three


def test_a_reply_slack_never_stored_is_posted_again_before_the_next(sim, client):
    root = client.chat_postMessage(channel=CHANNEL, text="root")["ts"]
    poster = PostOnce(client, look_for=0.3, look_every=0.05)
    _post(poster, root, "one")

    _held_post(sim, poster, root, "two", "drop")
    _post(poster, root, "three")

    assert _texts(sim, root) == ["one", "two", "three"]
    assert sim.calls_to("conversations.replies")  # looked for before it was posted again


def test_an_earlier_identical_line_is_not_taken_for_the_lost_one(sim, client):
    """Only what came after the newest reply known in the thread can be the lost post."""
    root = client.chat_postMessage(channel=CHANNEL, text="root")["ts"]
    poster = PostOnce(client, look_for=0.3, look_every=0.05)
    _post(poster, root, "same")

    _held_post(sim, poster, root, "same", "drop")

    assert _texts(sim, root) == ["same", "same"]


def test_a_post_slack_refused_is_not_looked_for(sim, client):
    root = client.chat_postMessage(channel=CHANNEL, text="root")["ts"]
    sim.faults.add("chat.postMessage", error="channel_not_found")
    with pytest.raises(SlackApiError, match="channel_not_found"):
        _post(PostOnce(client), root, "one")
    assert sim.calls_to("conversations.replies") == []  # Slack said no: nothing was posted


def test_an_announcement_slack_stores_after_the_client_gave_up_is_posted_once(sim, client):
    """An arrival's announcement (a top-level message with a Move button): its post timed out
    and Slack stored it later; it is found in the channel's history, not posted a second time
    (a second copy's live button would answer for a host whose record points at the other)."""
    poster = PostOnce(client, look_every=0.05)
    poster.post_root(CHANNEL, "before", reply("before"))
    held = sim.holds.add("chat.postMessage", lambda params: params.get("text") == "host-1 is here")
    with ThreadPoolExecutor(1) as pool:
        posting = pool.submit(poster.post_root, CHANNEL, "host-1 is here", reply("host-1 is here"))
        held.wait_arrived()
        sim.wait_for_calls("conversations.history")  # the client gave up, and looks
        held.release()
        found = posting.result(timeout=60)

    texts = {ts: m["text"] for ts, m in sim.messages(CHANNEL).items()}
    assert sorted(texts.values()) == ["before", "host-1 is here"]  # once
    assert texts[found] == "host-1 is here"


def test_an_announcement_slack_never_stored_is_posted_again(sim, client):
    poster = PostOnce(client, look_for=0.3, look_every=0.05)
    held = sim.holds.add("chat.postMessage", lambda params: params.get("text") == "host-2 is here")
    with ThreadPoolExecutor(1) as pool:
        posting = pool.submit(poster.post_root, CHANNEL, "host-2 is here", reply("host-2 is here"))
        held.wait_arrived()
        held.drop()
        found = posting.result(timeout=60)
    assert [m["text"] for m in sim.messages(CHANNEL).values()] == ["host-2 is here"]
    assert sim.messages(CHANNEL)[found]["text"] == "host-2 is here"
