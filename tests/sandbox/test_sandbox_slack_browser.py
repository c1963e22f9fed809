"""`joinops sandbox --slack` in a real browser: headless Chromium (Debian's) driven by playwright
through the README's steps, against the real bot in HTTP mode over slacksim.

The README says: type `/join a-w-1 from clusterA to clusterB` as alice, switch to bob (the
approver), click Approve, and watch the thread fill. The page's Approve button comes from the
bot's Block Kit payload; the click travels page → slacksim (signs it) → the bot → Redis → a
worker → kubesim, and what the bot posts back comes to the page through slacksim's state. The
README's picture is this test's screenshot of the result (JOINOPS_UPDATE_SCREENSHOT=1 writes it
to docs/img/sandbox-slack.png; otherwise it goes to the test's temporary directory).

As in Slack, each answer (the request, `/join help`, `list`, `arrivals`, a typo's, the thread's
replies) comes into view on its own, after a reload too; a reader who scrolled up is not moved.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from playwright.sync_api import Browser, Locator, Page, expect

from tests.support import session_redis
from tests.support.browser import (
    THREAD,
    VIEWPORT,
    chromium,
    in_view,
    scroll_up,
    wait_newest_in_view,
)

README_PICTURE = Path(__file__).resolve().parents[2] / "docs" / "img" / "sandbox-slack.png"
UPDATE_PICTURE = os.environ.get("JOINOPS_UPDATE_SCREENSHOT") == "1"
FLOW_TIMEOUT_MS = 90_000
HOSTS = 3  # the sandbox's arrivals: host-1, host-2, host-3, announced in the channel
REQUEST = "a-w-1 from clusterA to clusterB"
ALICE = "U0SANDREQ1"  # the sandbox's requester (bob, U0SANDBOX1, approves)


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[str]:
    """`joinops sandbox --slack` as a user starts it; yields the page's URL from its output."""
    redis.Redis.from_url(session_redis.url()).flushdb()
    env = {**os.environ, "REDIS_URL": session_redis.url(), "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "cli", "sandbox", "--slack", "--dir", "sb", "--web-port", "0"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout or []]).start()
    seen = []
    while not (found := re.search(r"Open its channel: (http://127\.0\.0\.1:\d+/)", "".join(seen))):
        seen.append(lines.get(timeout=60))
    yield found.group(1)
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=60) == 0, "".join(seen)
    redis.Redis.from_url(session_redis.url()).flushdb()


@pytest.fixture
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


def request_message(page: Page, header: str) -> Locator:
    return page.locator(
        "#messages article.message", has=page.locator(".block-header", has_text=header)
    )


def typed(page: Page, command: str) -> None:
    page.fill("#command", command)
    page.press("#command", "Enter")


def answered(page: Page, command: str) -> Locator:
    """`command` typed; its answer (only the typer sees it), once it is the newest and in view."""
    before = page.locator("#messages article.ephemeral").count()
    typed(page, command)
    expect(page.locator("#messages article.ephemeral")).to_have_count(before + 1)
    wait_newest_in_view(page, "Only visible to you")
    return page.locator("#messages article.message").last


def shown_text(page: Page) -> str:
    return page.locator("#messages").inner_text() + page.locator(THREAD).inner_text()


def assert_drawn_as_slack_does(page: Page) -> None:
    """No emoji code and no mrkdwn mark left as typed (`:tada:`, `*Refused:*`)."""
    text = shown_text(page)
    assert re.findall(r":[a-z0-9_+-]+:", text) == []
    assert "*" not in text


def test_the_readme_steps_in_the_browser(sandbox, browser, tmp_path):
    page = browser.new_page(viewport=VIEWPORT)
    page.goto(sandbox)
    expect(page.locator(".persona[aria-pressed=true]")).to_contain_text("alice")
    arrived = page.locator("#messages article.message", has_text="A host arrived")
    expect(arrived).to_have_count(HOSTS, timeout=FLOW_TIMEOUT_MS)  # meanwhile, hosts arrive
    wait_newest_in_view(page, "A host arrived: host-3")
    expect(arrived.first.locator(".emoji").first).to_have_attribute("title", ":inbox_tray:")

    typed(page, f"/join {REQUEST}")  # the README's steps, from here
    message = request_message(page, "Move a-w-1: clusterA → clusterB")
    expect(message.locator(".fields .mention")).to_have_text("@alice")
    expect(message.locator(".context").last).to_contain_text("Waiting for an approver")
    wait_newest_in_view(page, "Move a-w-1: clusterA → clusterB")

    page.locator(".persona", has_text="bob").click()
    expect(page.locator(".persona[aria-pressed=true]")).to_contain_text("bob")
    expect(page.locator("article.ephemeral")).to_have_count(0)  # alice's, not bob's
    wait_newest_in_view(page, "Move a-w-1: clusterA → clusterB")
    message.get_by_role("button", name="Approve").click()

    thread = page.locator("#thread-pane")  # Slack's side pane: the request and its replies
    expect(thread.locator(".block-header")).to_have_text("Move a-w-1: clusterA → clusterB")
    expect(thread.locator(".thread-divider")).to_be_visible(timeout=FLOW_TIMEOUT_MS)
    wait_newest_in_view(page, "", pane=THREAD)  # the thread fills: its newest reply in view
    expect(message.locator(".context").last).to_contain_text(
        "Succeeded", timeout=FLOW_TIMEOUT_MS
    )  # the root's status line, updated in place
    wait_newest_in_view(page, "moved from clusterA to clusterB", pane=THREAD)
    expect(message.get_by_role("button", name="Approve")).to_have_count(0)

    page.reload()  # after a reload: the newest message and the newest reply in view
    wait_newest_in_view(page, "Move a-w-1: clusterA → clusterB")
    wait_newest_in_view(page, "moved from clusterA to clusterB", pane=THREAD)
    assert_drawn_as_slack_does(page)
    assert "\N{PARTY POPPER}" in page.locator(THREAD).inner_text()  # :tada:, drawn
    page.screenshot(path=str(README_PICTURE if UPDATE_PICTURE else tmp_path / "sandbox-slack.png"))

    answers_as_alice(browser.new_page(viewport=VIEWPORT), sandbox, bob=page)


def answers_as_alice(page: Page, sandbox: str, bob: Page) -> None:
    """Alice's answers come into view in a channel with an open thread; bob, scrolled up to
    read, is not moved by her new request, and is told of it."""
    page.goto(f"{sandbox}#{ALICE}")
    expect(page.locator("#thread-pane")).to_be_visible()
    wait_newest_in_view(page, "Move a-w-1: clusterA → clusterB")
    expect(answered(page, "/join help")).to_contain_text("/join help")
    expect(answered(page, "/join list")).to_contain_text("requests")
    hosts = answered(page, "/join arrivals")
    expect(hosts.locator("b").first).to_contain_text("Hosts seen in")
    expect(answered(page, "/join a-w-1 form clusterA to clusterB")).to_contain_text("from")
    assert_drawn_as_slack_does(page)

    scroll_up(bob)
    read = request_message(bob, "Move a-w-1: clusterA → clusterB")  # what bob is reading
    where = read.bounding_box()
    count = bob.locator("#messages article.message").count()
    typed(page, "/join a-w-1 from clusterB to clusterA")
    expect(bob.locator("#messages article.message")).to_have_count(count + 1)
    expect(bob.locator("#channel-pane .new-messages")).to_be_visible()
    assert read.bounding_box() == where  # not moved
    assert not in_view(bob, "clusterB → clusterA")
    bob.locator("#channel-pane .new-messages").click()
    wait_newest_in_view(bob, "clusterB → clusterA")
