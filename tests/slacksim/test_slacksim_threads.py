"""A thread in SlackSim, through the real slack_sdk WebClient: read back with
conversations.replies, and what notifies people (a new message does; an edit does not)."""

from collections.abc import Iterator

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from slacksim.server import SlackSim
from slacksim.tiers import Tiers


@pytest.fixture
def sim() -> Iterator[SlackSim]:
    with SlackSim(tiers=Tiers.off()) as running:  # a thread of a few replies at once
        yield running


def _thread(client: WebClient, replies: int) -> tuple[str, list[str]]:
    root = client.chat_postMessage(channel="C1", text="root")["ts"]
    said = [client.chat_postMessage(channel="C1", thread_ts=root, text=f"r{i}")["ts"]
            for i in range(replies)]  # fmt: skip
    return root, said


def test_replies_come_parent_first_then_oldest_first_after_oldest(client: WebClient) -> None:
    root, said = _thread(client, 4)
    whole = client.conversations_replies(channel="C1", ts=root)["messages"]
    assert [m["text"] for m in whole] == ["root", "r0", "r1", "r2", "r3"]
    after = client.conversations_replies(channel="C1", ts=root, oldest=said[1])["messages"]
    assert [m["text"] for m in after] == ["root", "r2", "r3"]  # oldest itself excluded
    within = client.conversations_replies(
        channel="C1", ts=root, oldest=said[1], latest=said[2], inclusive=True
    )["messages"]
    assert [m["text"] for m in within] == ["root", "r1", "r2"]


def test_replies_page_through_next_cursor(client: WebClient) -> None:
    root, _ = _thread(client, 5)
    first = client.conversations_replies(channel="C1", ts=root, limit=2)
    assert [m["text"] for m in first["messages"]] == ["root", "r0", "r1"]
    assert first["has_more"] is True
    cursor = first["response_metadata"]["next_cursor"]
    second = client.conversations_replies(channel="C1", ts=root, limit=2, cursor=cursor)
    assert [m["text"] for m in second["messages"]] == ["r2", "r3"]  # the parent only once


def test_replies_of_an_unknown_thread_or_channel_are_refused(client: WebClient) -> None:
    root, _ = _thread(client, 1)
    with pytest.raises(SlackApiError, match="thread_not_found"):
        client.conversations_replies(channel="C1", ts="1.000100")
    with pytest.raises(SlackApiError, match="channel_not_found"):
        client.conversations_replies(channel="C2", ts=root)


def test_new_messages_notify_and_edits_do_not(client: WebClient, sim: SlackSim) -> None:
    root, said = _thread(client, 2)
    client.chat_update(channel="C1", ts=said[0], text="r0, edited <@U1>")  # a mention, added
    client.chat_update(channel="C1", ts=root, text="root, edited")
    assert sim.notifications("C1", root) == 2  # the two replies
    assert sim.notifications("C1") == 3  # and the root, a channel post
    assert sim.notifications("C2") == 0
