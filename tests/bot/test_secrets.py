"""No secret leaves: every main flow runs through the bot and a real worker, then everything
recorded is scanned for every secret that existed during the run.

Flows: a worker migration, a control-plane migration (a certificate key), a request the rules
refuse, a migration that fails (its drain times out after the token was made), a control-plane
Ignition file from `/join ignition` (token and key, delivered by DM), a click refused to a
stranger, and `/join status`, `list` and `clusters`.

Secrets, taken from the simulated clusters as the engine writes them (a hook on each cluster's
store sees every Secret created): bootstrap tokens (the secret half, and id.secret), certificate
keys (the upload Secret, every JoinConfiguration, and what the clusters were uploaded with),
the encrypted `kubeadm-certs`; the kubeconfig credentials (each cluster's bearer token); the
Slack bot token and signing secret.

Scanned: every Web API call to the simulated Slack (parameters and answers), every response_url
body, every ack, every line the bot logged (JSON, as `joinops serve` writes them, INFO and up)
and the worker's log, and every key in Redis — the audit trail, every event stream, requests,
step records, queued jobs (decompressed). The one place a token must be is the Ignition file
itself, uploaded into the requester's DM: that is the product, and it is checked to be there.
"""

from __future__ import annotations

import base64
import io
import json
import logging
import re
import secrets
import urllib.parse
import zlib
from collections.abc import Iterator
from typing import Any

import pytest
import redis
import yaml
from pythonjsonlogger.json import JsonFormatter

from joinops.ignition.config import join_configuration_of
from joinops.logs import RequestIdFilter
from joinops.requests.lifecycle import State
from kubesim import World
from kubesim.entries import Change
from slacksim.server import SlackSim
from slacksim.tiers import Tiers
from tests.bot.harness import (
    APPROVER,
    GROUP,
    GROUP_MEMBER,
    SECRET,
    SLACK_SPEED,
    STRANGER,
    text_of,
)

DRAIN = "2s"


class SecretWatch:
    """Every secret value written into any simulated cluster while it is installed."""

    def __init__(self, world: World) -> None:
        self.found: dict[str, str] = {}  # value -> what it is
        self.errors: list[str] = []
        self.token_ids: set[str] = set()
        for cluster in world.clusters.values():
            self._note(cluster.token, f"kubeconfig token of {cluster.name}")
            store = cluster.store
            store._on_change = self._hook(store._on_change)  # type: ignore[method-assign]

    def _hook(self, original: Any) -> Any:
        def on_change(change: Change) -> None:
            if change.resource == "secrets" and change.type != "DELETED":
                try:
                    self._take(change.new.obj)
                except Exception as e:  # never break the simulated cluster; fail the test
                    self.errors.append(f"{change.new.meta.get('name')}: {e!r}")
            original(change)

        return on_change

    def _take(self, obj: dict[str, Any]) -> None:
        name = obj["metadata"]["name"]
        raw = {k: base64.b64decode(v) for k, v in (obj.get("data") or {}).items()}
        if name == "kubeadm-certs":  # encrypted, binary: as stored, and as Base64
            for key, value in raw.items():
                what = f"encrypted control-plane certificates ({key} of Secret {name})"
                self._note(obj["data"][key], what)
                self._note(value.hex(), what)
            return
        data = {k: v.decode() for k, v in raw.items()}
        data.update(obj.get("stringData") or {})
        if name.startswith("bootstrap-token-"):
            token_id, secret = data["token-id"], data["token-secret"]
            labels = obj["metadata"].get("labels") or {}
            # a return token's id is never shown (the target's is, in the thread)
            if labels.get("app.kubernetes.io/name") != "joinops-return-token":
                self.token_ids.add(token_id)
            self._note(secret, f"bootstrap token secret ({name})")
            self._note(f"{token_id}.{secret}", f"bootstrap token ({name})")
            return
        for key, value in data.items():
            what = f"{key} of Secret {name}"
            if key == "certificate-key":
                self._note(value, f"certificate key ({what})")
            else:
                self._walk(yaml.safe_load(value), what)

    def _walk(self, node: Any, what: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("token", "certificateKey") and isinstance(value, str):
                    self._note(value, f"{key} in {what}")
                else:
                    self._walk(value, what)
        elif isinstance(node, list):
            for item in node:
                self._walk(item, what)

    def _note(self, value: str, what: str) -> None:
        self.found.setdefault(value, what)  # the first sight names it: a token, then its copies

    def of_kind(self, word: str) -> list[str]:
        return [value for value, what in self.found.items() if word in what]


@pytest.fixture
def sim() -> Iterator[SlackSim]:
    token = f"xoxb-{secrets.token_hex(24)}"  # findable anywhere
    with SlackSim(token=token, tiers=Tiers(SLACK_SPEED)) as running:
        running.usergroups[GROUP] = [GROUP_MEMBER]
        yield running


@pytest.fixture
def log_lines() -> Iterator[io.StringIO]:
    """What the bot logs, as `joinops serve` writes it (JSON lines, INFO and up)."""
    lines = io.StringIO()
    handler = logging.StreamHandler(lines)
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(
        JsonFormatter("%(asctime)s %(levelname)s %(name)s %(request_id)s %(message)s")
    )
    handler.setLevel(logging.INFO)
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    yield lines
    root.removeHandler(handler)
    root.setLevel(level)


def _redis_dump(client: redis.Redis) -> list[str]:
    parts = []
    for key in client.scan_iter(count=1000):
        kind = client.type(key).decode()
        parts.append(repr(key))
        if kind == "string":
            parts.append(repr(client.get(key)))
        elif kind == "hash":
            fields = client.hgetall(key)
            parts.append(repr(fields))
            if b"data" in fields:  # a queued job's arguments, compressed
                try:
                    parts.append(repr(zlib.decompress(fields[b"data"])))
                except zlib.error:
                    pass
        elif kind == "stream":
            parts.append(repr(client.xrange(key)))
        elif kind == "list":
            parts.append(repr(client.lrange(key, 0, -1)))
        elif kind == "set":
            parts.append(repr(client.smembers(key)))
        elif kind == "zset":
            parts.append(repr(client.zrange(key, 0, -1)))
    return parts


BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{24,}={0,2}")


def _readings(text: str) -> Iterator[str]:
    """The text as written, URL-decoded, and every long Base64 run in it decoded: a secret
    hidden in an encoding is still a secret."""
    yield text
    yield urllib.parse.unquote(text)
    for run in BASE64_RUN.findall(text):
        for decode in (base64.b64decode, base64.urlsafe_b64decode):
            try:
                yield decode(run + "=" * (-len(run) % 4)).decode("latin-1")
            except ValueError:
                pass


def _ended(replies: list[str]) -> bool:
    return any(r.startswith((":tada:", ":red_circle:", ":white_circle:")) for r in replies)


def _ask_and_approve(bot, text: str, acks: list[Any]) -> Any:  # type: ignore[no-untyped-def]
    before = len(bot.messages())
    asked, _ = bot.slash(text)
    acks.append(asked)
    message = bot.sim.wait_for(lambda: len(bot.messages()) > before and bot.messages()[-1], 20)
    request = bot.request_from_message(message)
    clicked, _ = bot.approve(request.id, APPROVER)
    acks.append(clicked)
    bot.wait_thread(request.id, _ended, timeout=60)
    return bot.request(request.id)


def test_no_secret_reaches_slack_the_logs_or_redis(make_bot, world, log_lines):
    watch = SecretWatch(world)
    bot = make_bot(timeouts={"drain": DRAIN})
    bot.start_worker()
    a = world.cluster("clusterA")
    a.add_pod("a-w-2", "db-0", labels={"app": "db"}, owner_kind="StatefulSet")
    a.add_pdb("db", "default", {"app": "db"}, min_available=1)  # the drain of a-w-2 times out
    acks: list[Any] = []

    worker = _ask_and_approve(bot, "a-w-1 from clusterA to clusterB", acks)
    control_plane = _ask_and_approve(bot, "a-cp-3 from clusterA to clusterB as cp", acks)
    failed = _ask_and_approve(bot, "a-w-2 from clusterA to clusterB", acks)
    ignition = _ask_and_approve(bot, "ignition clusterB as control-plane", acks)
    refused, _ = bot.slash("taken from clusterA to clusterB")  # a refusal, posted
    acks.append(refused)
    bot.sim.wait_for(lambda: any("`taken`" in text_of(m) for m in bot.messages()), 20)
    denied, rid = bot.approve(worker.id, STRANGER)
    acks.append(denied)
    bot.wait_answer(rid)
    for question in ("list", "clusters", *(f"status {r.id}" for r in (worker, failed))):
        asked, rid = bot.slash(question)
        acks.append(asked)
        bot.wait_answer(rid, timeout=20)

    assert worker.state is State.SUCCEEDED and control_plane.state is State.SUCCEEDED
    assert failed.state is State.FAILED and failed.failed_step == "drain"
    assert ignition.state is State.SUCCEEDED
    upload = bot.sim.wait_for(lambda: [u for u in bot.sim.uploads if u.completed], 10)[0]
    bot.executor.shutdown(wait=True)  # every listener has answered
    bot.relay.stop()  # and the relay has posted what it had: all that will be said was said

    # What there was to leak: a token per migration that made one and for the file, keys.
    tokens = watch.of_kind("bootstrap token (")  # id.secret, as a JoinConfiguration holds it
    keys = watch.of_kind("certificate key") + watch.of_kind("certificateKey")
    assert watch.errors == []
    assert len(tokens) >= 4 and len(set(keys)) >= 2, sorted(watch.found.values())
    assert len(watch.of_kind("kubeconfig token")) == len(world.clusters)
    watch.found[bot.sim.token] = "Slack bot token"
    watch.found[SECRET] = "Slack signing secret"
    assert upload.content is not None
    join = join_configuration_of(json.loads(upload.content))  # the product: the DM'd file
    assert join["discovery"]["bootstrapToken"]["token"] in tokens
    assert join["controlPlane"]["certificateKey"] in keys

    places = {
        "Slack Web API calls": [
            json.dumps([c.params, c.response], default=str) for c in bot.sim.calls
        ],
        "response_url bodies": [json.dumps(bodies) for bodies in bot.sim.response_urls.values()],
        "acks": [d.body.decode(errors="replace") for d in acks],
        "the bot's log": [log_lines.getvalue()],
        "the worker's log": [bot.worker_log()],
        "Redis": _redis_dump(bot.redis),
    }
    leaks = sorted(
        {
            f"{what} in {place}"
            for place, texts in places.items()
            for text in texts
            for reading in _readings(text)
            for value, what in watch.found.items()
            if value in reading
        }
    )
    assert leaks == []
    # and the scan looked at real content: the public halves of the tokens are there
    everything = "\n".join(text for texts in places.values() for text in texts)
    assert all(token_id in everything for token_id in watch.token_ids)
    assert '"audit"' in log_lines.getvalue() and "joinops:audit" in everything
