"""A request's texts name the commands of the surface it was asked from, never the other's."""

from __future__ import annotations

from joinops.requests import outcome_texts
from joinops.requests.store import Request
from joinops.requests.surface import terminal_user


def failed_before_agent(requester: str) -> str:
    request = Request(
        id="req-1a2b3c4d", node="a-w-1", source="clusterA", target="clusterB", requester=requester
    )
    return outcome_texts.where_before_agent(request, cordon_restored=True)


def test_a_request_asked_at_the_terminal_names_the_terminal_command() -> None:
    text = failed_before_agent(terminal_user("ops"))
    assert "`joinops retry req-1a2b3c4d`" in text and "/join" not in text


def test_a_request_asked_in_slack_names_the_slash_command() -> None:
    text = failed_before_agent("U0USER0001")
    assert "`/join retry req-1a2b3c4d`" in text and "joinops retry" not in text
