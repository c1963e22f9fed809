"""From the page to the app: slash commands and button clicks, signed and delivered as Slack
delivers them, with their answers made visible the way Slack shows them."""

from __future__ import annotations

import itertools
import json
import urllib.request
from dataclasses import dataclass
from typing import Any

from slacksim.server import SlackSim
from slacksim.signing import (
    CHANNEL_ID,
    CHANNEL_NAME,
    Delivery,
    block_actions_body,
    deliver,
    slash_command_body,
)


@dataclass(frozen=True)
class Person:
    """Someone the page can act as: a user id of the workspace, a name, a word on their part."""

    user_id: str
    name: str
    part: str = ""


class Gateway:
    """Delivers what people do on the page to the app at `events_url`, signed with `secret`."""

    def __init__(
        self,
        sim: SlackSim,
        events_url: str,
        secret: str,
        people: list[Person],
        *,
        command: str = "/join",
        channel: str = CHANNEL_ID,
    ) -> None:
        self.sim, self.events_url, self.secret = sim, events_url, secret
        self.people = {p.user_id: p for p in people}
        self.command, self.channel = command, channel
        self._ids = itertools.count(1)
        for person in people:
            sim.users.setdefault(person.user_id, {"name": person.name, "real_name": person.name})

    def person(self, user_id: str) -> Person:
        if user_id not in self.people:
            raise KeyError(user_id)
        return self.people[user_id]

    def run_command(self, user_id: str, text: str) -> Delivery:
        """`/join TEXT` typed by `user_id` in the channel; the ack's answer shown only to them."""
        person = self.person(user_id)
        response_url = self.sim.response_url(
            self._response_id("cmd"), channel=self.channel, user=user_id
        )
        body = slash_command_body(
            command=self.command,
            text=text,
            user_id=user_id,
            user_name=person.name,
            channel_id=self.channel,
            channel_name=CHANNEL_NAME,
            response_url=response_url,
        )
        delivery = deliver(self.events_url, body, self.secret)
        self._show_ack(delivery, response_url)
        return delivery

    def click(self, user_id: str, message_ts: str, action: dict[str, Any]) -> Delivery:
        """`user_id` clicked the button `action` (action_id, value, block_id, text) of a message
        in the channel (after confirming its dialog, if it has one)."""
        person = self.person(user_id)
        message = self.sim.messages(self.channel).get(message_ts)
        if message is None:
            raise LookupError(message_ts)
        response_url = self.sim.response_url(
            self._response_id("act"), channel=self.channel, user=user_id, message_ts=message_ts
        )
        body = block_actions_body(
            action_id=str(action.get("action_id") or ""),
            value=str(action.get("value") or ""),
            block_id=str(action.get("block_id") or "actions"),
            button_text=str(action.get("text") or "Button"),
            user_id=user_id,
            user_name=person.name,
            channel_id=self.channel,
            message_ts=message_ts,
            message=message,
            response_url=response_url,
        )
        return deliver(self.events_url, body, self.secret)

    def _show_ack(self, delivery: Delivery, response_url: str) -> None:
        """Slack shows a slash command's HTTP answer as a message: only to its user unless it
        says `in_channel`; the sim's response_url does exactly that with the same body."""
        if delivery.status != 200 or not delivery.body.strip():
            return
        try:
            answer = delivery.json()
        except ValueError:
            answer = {"text": delivery.body.decode(errors="replace")}
        if isinstance(answer, dict) and (answer.get("text") or answer.get("blocks")):
            request = urllib.request.Request(
                response_url,
                data=json.dumps(answer).encode(),
                headers={"Content-Type": "application/json"},
                method="POST",
            )
            with urllib.request.urlopen(request, timeout=5) as answered:
                answered.read()

    def _response_id(self, kind: str) -> str:
        return f"web-{kind}-{next(self._ids)}"
