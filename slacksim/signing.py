"""Requests *into* a Bolt app, built and signed the way Slack sends them.

    body = slash_command_body(text="node-1 from a to b", response_url=sim.response_url("r1"))
    delivery = deliver(app_url + "/slack/events", body, secret)

Slash commands arrive form-encoded; interactivity arrives form-encoded as one `payload=` field
holding JSON. Both are signed with the app's signing secret: `v0=` + hex HMAC-SHA256 of
`v0:<timestamp>:<body>` (https://docs.slack.dev/authentication/verifying-requests-from-slack).
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

FORM = "application/x-www-form-urlencoded"

TEAM_ID = "T0SIM00001"  # same defaults as slacksim.workspace.Workspace
TEAM_DOMAIN = "joinops-sim"
APP_ID = "A0APP00001"
BOT_USER_ID = "U0BOT00001"
USER_ID = "U0USER0001"
USER_NAME = "alice"
CHANNEL_ID = "C0CHAN0001"
CHANNEL_NAME = "ops"
VERIFICATION_TOKEN = "verification-token-sim"  # the deprecated per-app token Slack still sends

_triggers = itertools.count(1)


def new_trigger_id() -> str:
    """A fresh Slack-shaped trigger id ("<digits>.<digits>.<hex>")."""
    n = next(_triggers)
    return f"{1_733_150_000 + n}.{4_242_424_242}.{hashlib.sha256(str(n).encode()).hexdigest()[:32]}"


def slash_command_fields(
    *,
    command: str = "/join",
    text: str = "",
    user_id: str = USER_ID,
    user_name: str = USER_NAME,
    channel_id: str = CHANNEL_ID,
    channel_name: str = CHANNEL_NAME,
    team_id: str = TEAM_ID,
    team_domain: str = TEAM_DOMAIN,
    response_url: str = "https://hooks.slack.com/commands/T0SIM00001/1/sim",
    trigger_id: str | None = None,
    api_app_id: str = APP_ID,
) -> dict[str, str]:
    """The form fields of a slash command request, in the order Slack sends them."""
    return {
        "token": VERIFICATION_TOKEN,
        "team_id": team_id,
        "team_domain": team_domain,
        "channel_id": channel_id,
        "channel_name": channel_name,
        "user_id": user_id,
        "user_name": user_name,
        "command": command,
        "text": text,
        "api_app_id": api_app_id,
        "is_enterprise_install": "false",
        "response_url": response_url,
        "trigger_id": trigger_id or new_trigger_id(),
    }


def slash_command_body(**fields: Any) -> bytes:
    """A form-encoded slash command body; takes the arguments of `slash_command_fields`."""
    return urlencode(slash_command_fields(**fields)).encode()


def block_actions_payload(
    *,
    action_id: str,
    value: str,
    user_id: str = USER_ID,
    channel_id: str = CHANNEL_ID,
    message_ts: str,
    response_url: str = "https://hooks.slack.com/actions/T0SIM00001/1/sim",
    block_id: str = "actions",
    button_text: str = "Button",
    user_name: str = USER_NAME,
    channel_name: str = CHANNEL_NAME,
    team_id: str = TEAM_ID,
    team_domain: str = TEAM_DOMAIN,
    api_app_id: str = APP_ID,
    message: dict[str, Any] | None = None,
    is_ephemeral: bool = False,
    trigger_id: str | None = None,
) -> dict[str, Any]:
    """The JSON of a `block_actions` interaction: a button in message `message_ts` was clicked.

    message: the message the button is in (e.g. `sim.messages(channel)[ts]`); a minimal bot
    message by default. Ephemeral messages are not included in real payloads, so neither here.
    """
    payload: dict[str, Any] = {
        "type": "block_actions",
        "user": {"id": user_id, "username": user_name, "name": user_name, "team_id": team_id},
        "api_app_id": api_app_id,
        "token": VERIFICATION_TOKEN,
        "container": {
            "type": "message",
            "message_ts": message_ts,
            "channel_id": channel_id,
            "is_ephemeral": is_ephemeral,
        },
        "trigger_id": trigger_id or new_trigger_id(),
        "team": {"id": team_id, "domain": team_domain},
        "enterprise": None,
        "is_enterprise_install": False,
        "channel": {"id": channel_id, "name": channel_name},
        "state": {"values": {}},
        "response_url": response_url,
        "actions": [
            {
                "action_id": action_id,
                "block_id": block_id,
                "text": {"type": "plain_text", "text": button_text, "emoji": True},
                "value": value,
                "type": "button",
                "action_ts": f"{int(time.time())}.{time.time_ns() % 1_000_000:06d}",
            }
        ],
    }
    if not is_ephemeral:
        payload["message"] = message or {
            "type": "message",
            "user": BOT_USER_ID,
            "ts": message_ts,
            "text": "",
        }
    return payload


def block_actions_body(**fields: Any) -> bytes:
    """A form-encoded `payload=<json>` body; takes the arguments of `block_actions_payload`."""
    return payload_body(block_actions_payload(**fields))


def payload_body(payload: dict[str, Any]) -> bytes:
    """Any interaction payload, encoded as Slack posts it (form field `payload`)."""
    return urlencode({"payload": json.dumps(payload, separators=(",", ":"))}).encode()


def signature(body: bytes, secret: str, timestamp: int) -> str:
    """Slack's v0 request signature of `body` sent at `timestamp` (Unix seconds)."""
    base = b"v0:" + str(timestamp).encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def sign(
    body: bytes,
    secret: str,
    timestamp: int | None = None,
    *,
    retry_num: int | None = None,
    retry_reason: str = "http_timeout",
    content_type: str | None = FORM,
) -> dict[str, str]:
    """The headers Slack sends with `body`: timestamp (now by default) and signature, the
    Content-Type, and on a redelivery `X-Slack-Retry-Num` / `X-Slack-Retry-Reason`."""
    ts = int(time.time()) if timestamp is None else timestamp
    headers = {
        "X-Slack-Request-Timestamp": str(ts),
        "X-Slack-Signature": signature(body, secret, ts),
    }
    if content_type is not None:
        headers["Content-Type"] = content_type
    if retry_num is not None:
        headers["X-Slack-Retry-Num"] = str(retry_num)
        headers["X-Slack-Retry-Reason"] = retry_reason
    return headers


@dataclass(frozen=True)
class Delivery:
    """What the app answered: HTTP status, headers (lower-case names), body, seconds taken."""

    status: int
    headers: dict[str, str]
    body: bytes
    elapsed: float

    def json(self) -> Any:
        return json.loads(self.body)


def deliver(
    url: str,
    body: bytes,
    secret: str,
    *,
    timestamp: int | None = None,
    retry_num: int | None = None,
    timeout: float = 3.0,
) -> Delivery:
    """POST a signed body to `url` as Slack does; Slack gives up after 3 seconds."""
    headers = sign(body, secret, timestamp, retry_num=retry_num)
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, answer, got = response.status, response.read(), response.headers
    except urllib.error.HTTPError as e:
        status, answer, got = e.code, e.read(), e.headers
    elapsed = time.perf_counter() - started
    return Delivery(status, {k.lower(): v for k, v in got.items()}, answer, elapsed)
