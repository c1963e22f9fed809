"""Property-based fuzzing of what Slack sends, signed, over HTTP into the real bolt app.

Interaction payloads (malformed JSON, missing fields, wrong types, huge values, unknown action
ids, bad IDs) and slash command forms (missing fields, bad IDs, huge text, bytes that are not
UTF-8) — every one is answered with a 2xx or a 4xx, no ERROR and no traceback reaches the log,
and no request is created, changed or left stuck: Redis holds exactly what it held before, but
for `denied` lines in the audit trail. The grammar itself is fuzzed in test_grammar.py.
"""

from __future__ import annotations

import json
import logging
import os
import string
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot import open_limit
from joinops.requests.audit import STREAM, Action, AuditLog
from joinops.requests.lifecycle import State
from slacksim.signing import block_actions_payload, sign, slash_command_fields
from tests.bot.harness import (
    APPROVER,
    CHANNEL,
    REQUESTER,
    SECRET,
    STRANGER,
    buttons,
    text_of,
    until,
)

EXAMPLES = int(os.environ.get("JOINOPS_FUZZ_EXAMPLES", "120"))
# Derandomised: the same examples every run, so the assertions that the fuzz reached an
# approver past the filter and a refused stranger hold on every run (a random draw once missed
# one in CI); new seeds are explored by changing EXAMPLES, not by chance.
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
ABSENT = object()  # a field left out


class Problems(logging.Handler):
    """Every ERROR, and every record carrying a traceback, logged while it is attached."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR or record.exc_info or record.stack_info:
            self.records.append(record)


@pytest.fixture
def problems() -> Iterator[Problems]:
    handler = Problems()
    root = logging.getLogger()
    root.addHandler(handler)
    yield handler
    root.removeHandler(handler)


def _post(url: str, body: bytes, content_type: str) -> tuple[int, bytes]:
    headers = sign(body, SECRET, content_type=content_type)
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def _snapshot(client: redis.Redis) -> dict[bytes, Any]:
    """Everything in Redis but the audit trail and RQ's own bookkeeping of its workers (their
    heartbeats go on whatever Slack sends): key, type and content."""
    state: dict[bytes, Any] = {}
    for key in sorted(client.scan_iter()):
        kind = client.type(key)
        if key == STREAM.encode() or key.startswith(b"rq:worker"):
            continue
        if kind == b"hash":
            state[key] = client.hgetall(key)
        elif kind == b"set":
            state[key] = client.smembers(key)
        elif kind == b"zset":
            state[key] = client.zrange(key, 0, -1, withscores=True)
        elif kind == b"list":
            state[key] = client.lrange(key, 0, -1)
        elif kind == b"stream":
            state[key] = client.xlen(key)
        else:
            state[key] = client.get(key) if kind == b"string" else kind
    return state


# ---- strategies --------------------------------------------------------------------------------

JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=30),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)
HUGE = st.integers(min_value=5_000, max_value=200_000).map(lambda n: "x" * n)
IDS = st.sampled_from(["", "U1", "u0user0001", "U0USER0001\n", "C0CHAN0001", "<@U1>", "x" * 300])
USERS = st.sampled_from([STRANGER, APPROVER, REQUESTER]) | IDS | JUNK
ACTION_IDS = st.sampled_from(["join_approve", "join_reject", "join_unknown", "", "a b"]) | JUNK


@st.composite
def interaction_payloads(draw: st.DrawFn, request_id: str, message_ts: str, url: str) -> Any:
    """A block_actions payload taken apart: fields dropped, retyped, inflated or replaced."""
    approver_ok = draw(st.booleans())  # an approver only ever clicks requests that do not exist
    value = draw(
        st.sampled_from([request_id, "req-00000000", "req-zzzz", "", "x" * 3000])
        if not approver_ok
        else st.sampled_from(["req-00000000", "req-deadbeef"])
    )
    payload = block_actions_payload(
        action_id=draw(st.sampled_from(["join_approve", "join_reject"])),
        value=value,
        user_id=APPROVER if approver_ok else draw(st.sampled_from([STRANGER, REQUESTER])),
        message_ts=message_ts,
        response_url=url,
    )
    for path in draw(
        st.lists(
            st.sampled_from(
                [
                    ("user",),
                    ("user", "id"),
                    ("actions",),
                    ("actions", 0),
                    ("actions", 0, "action_id"),
                    ("actions", 0, "value"),
                    ("response_url",),
                    ("channel",),
                    ("channel", "id"),
                    ("team",),
                    ("team", "id"),
                    ("container",),
                    ("message",),
                    ("type",),
                    ("trigger_id",),
                ]
            ),
            max_size=3,
        )
    ):
        if approver_ok and path in (("user",), ("user", "id")):
            continue  # keep the approver an approver: their clicks must stay harmless
        _mutate(payload, path, draw(st.sampled_from(["drop", "junk", "huge", "id"])), draw)
    if draw(st.booleans()):
        payload["actions"] = [{"action_id": draw(ACTION_IDS), "value": draw(JUNK)}]
    return payload


def _mutate(payload: dict[str, Any], path: tuple[Any, ...], how: str, draw: st.DrawFn) -> None:
    parent: Any = payload
    for step in path[:-1]:
        try:
            parent = parent[step]
        except (KeyError, IndexError, TypeError):
            return
    last = path[-1]
    if not isinstance(parent, dict | list):
        return
    if isinstance(parent, list) and (not isinstance(last, int) or last >= len(parent)):
        return
    if how == "drop":
        parent.pop(last, None) if isinstance(parent, dict) else parent.pop(last)
    elif how == "junk":
        parent[last] = draw(JUNK)
    elif how == "huge":
        parent[last] = draw(HUGE)
    else:
        parent[last] = draw(IDS)


@st.composite
def interaction_bodies(draw: st.DrawFn, request_id: str, ts: str, url: str) -> tuple[bytes, str]:
    kind = draw(st.sampled_from(["payload", "payload", "payload", "bad-json", "raw-json", "form"]))
    if kind == "payload":
        payload = draw(interaction_payloads(request_id, ts, url))
        return urlencode({"payload": json.dumps(payload)}).encode(), "form"
    if kind == "bad-json":
        text = draw(st.sampled_from(["{", '{"type": "block_actions"', "[]", "null", "1e999"]))
        return urlencode({"payload": text + draw(st.text(max_size=20))}).encode(), "form"
    if kind == "raw-json":  # the Events API's JSON body, which the bot does not subscribe to
        payload = draw(interaction_payloads(request_id, ts, url) | JUNK)
        return json.dumps(payload).encode(), "json"
    fields = draw(st.dictionaries(st.sampled_from(["payload", "type", "x", ""]), st.text()))
    return urlencode(fields).encode(), "form"


SAFE_TEXT = st.sampled_from(
    ["", "help", "list", "status", "status req-00000000", "cancel req-deadbeef", "retry nope"]
) | st.text(alphabet=string.ascii_letters + " `<>@&\u00e9\u202e\x00", max_size=40)


@st.composite
def slash_forms(draw: st.DrawFn, url: str) -> bytes:
    fields: dict[str, Any] = slash_command_fields(
        text=draw(SAFE_TEXT | HUGE), user_id=draw(USERS.map(str)), response_url=url
    )
    for name in draw(st.lists(st.sampled_from(sorted(fields)), max_size=3)):
        change = draw(st.sampled_from(["drop", "id", "huge", "empty"]))
        if change == "drop":
            fields.pop(name, None)
        elif change == "id":
            fields[name] = draw(IDS)
        elif change == "huge":
            fields[name] = draw(HUGE)
        else:
            fields[name] = ""
    body = urlencode(fields).encode()
    if draw(st.booleans()):
        body += b"&text=" + draw(st.binary(max_size=12))  # not necessarily UTF-8 at all
    return body


# ---- the tests ---------------------------------------------------------------------------------


def _pending(bot) -> Any:  # type: ignore[no-untyped-def]
    bot.slash("a-w-1 from clusterA to clusterB")
    request = bot.request_from_message(bot.wait_message())
    audit = AuditLog(bot.redis)
    until(  # its audit entry, and then the last write it makes: its open-request slot given back
        lambda: (
            any(
                e.request_id == request.id and e.action == Action.REQUESTED for e in audit.entries()
            )
            and not bot.redis.exists(open_limit.ASKING + request.requester)
        ),
        5,
    )
    return request


def _answered_well(status: int, body: bytes) -> None:
    assert 200 <= status < 500, (status, body[:200])
    assert b"Traceback" not in body, body[:200]


def _nothing_changed(bot, before: dict[bytes, Any], request: Any, problems: Problems) -> None:  # type: ignore[no-untyped-def]
    bot.executor.shutdown(wait=True)  # every listener the fuzz started has finished
    assert [r.getMessage() for r in problems.records] == []
    assert _snapshot(bot.redis) == before
    assert {e.action for e in AuditLog(bot.redis).entries()} <= {Action.REQUESTED, Action.DENIED}
    current = bot.request(request.id)
    assert current.state is State.PENDING and bot.jobs() == []
    assert buttons(bot.root(request.id))  # still waiting, still approvable: not stuck
    assert [c.params.get("channel") for c in bot.sim.calls_to("chat.postMessage")] == [CHANNEL]


def test_fuzzed_interaction_payloads_never_crash_nor_change_anything(bot, problems):
    request = _pending(bot)
    before = _snapshot(bot.redis)
    url = bot.sim.response_url("fuzz-click", channel=CHANNEL, user=STRANGER)
    statuses: set[int] = set()

    @FUZZ
    @given(interaction_bodies(request.id, request.message_ts, url))
    def one(body_and_type: tuple[bytes, str]) -> None:
        body, kind = body_and_type
        content_type = "application/json" if kind == "json" else "application/x-www-form-urlencoded"
        status, answer = _post(bot.events_url, body, content_type)
        _answered_well(status, answer)
        statuses.add(status)

    one()
    _nothing_changed(bot, before, request, problems)
    assert {200, 400, 404} <= statuses  # the fuzz reached refusals, listeners and "not ours"
    answers = [text_of(body) for body in bot.sim.responses("fuzz-click")]
    assert any("There is no request" in a for a in answers)  # an approver, past the filter
    assert any("you are not one of them" in a for a in answers)  # anyone else, refused


def test_fuzzed_slash_commands_never_crash_nor_change_anything(bot, problems):
    request = _pending(bot)
    before = _snapshot(bot.redis)
    url = bot.sim.response_url("fuzz-command", channel=CHANNEL, user=STRANGER)
    statuses: set[int] = set()

    @FUZZ
    @given(slash_forms(url))
    def one(body: bytes) -> None:
        status, answer = _post(bot.events_url, body, "application/x-www-form-urlencoded")
        _answered_well(status, answer)
        statuses.add(status)

    one()
    _nothing_changed(bot, before, request, problems)
    assert {200, 400} <= statuses
