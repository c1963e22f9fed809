"""slacksim.web's small API refuses what a page of another site, or a typo, could send."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from slacksim import SlackSim
from slacksim.web import ChannelPage, Person

ALICE = Person("U0ALICE001", "alice", "requester")


@pytest.fixture
def page() -> Iterator[ChannelPage]:
    with SlackSim() as sim, ChannelPage(sim, "http://127.0.0.1:9/none", "s", [ALICE]) as page:
        yield page


def status_of(request: urllib.request.Request) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_a_form_post_from_another_site_is_refused(page: ChannelPage) -> None:
    form = urllib.request.Request(
        page.url + "api/command",
        data=b"user=U0ALICE001&text=help",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert status_of(form)[0] == 415


def test_someone_the_page_does_not_know_gets_a_clear_error(page: ChannelPage) -> None:
    code, body = status_of(urllib.request.Request(page.url + "api/state?user=U0NOBODY"))
    assert code == 404 and "U0NOBODY" in body["error"]
    command = urllib.request.Request(
        page.url + "api/command",
        data=json.dumps({"user": "U0NOBODY", "text": "help"}).encode(),
        headers={"Content-Type": "application/json"},
    )
    assert status_of(command)[0] == 400


def test_an_app_that_does_not_answer_is_reported_not_raised(page: ChannelPage) -> None:
    command = urllib.request.Request(
        page.url + "api/command",
        data=json.dumps({"user": ALICE.user_id, "text": "help"}).encode(),
        headers={"Content-Type": "application/json"},
    )
    code, body = status_of(command)
    assert code == 502 and "did not answer" in body["error"]
