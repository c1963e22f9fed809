"""`joinops sandbox --slack` in a real browser: headless Chromium (Debian's) driven by playwright
through the whole approval flow, against the real bot in HTTP mode over slacksim.

The page's Approve button comes from the bot's Block Kit payload, its confirmation dialog too;
the click travels page → slacksim (signs it) → the bot → Redis → a worker → kubesim, and what
the bot posts back comes to the page through slacksim's state.
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
from kubernetes import client, config
from playwright.sync_api import Browser, Page, expect, sync_playwright

from tests.support import session_redis

CHROMIUM = "/usr/bin/chromium"  # Debian's package; playwright never downloads a browser here
SCREENSHOT = os.environ.get("JOINOPS_SCREENSHOT")  # also save the picture there (docs/img/…)
FLOW_TIMEOUT_MS = 90_000


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
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox"]
        )
        yield launched
        launched.close()


def add_bare_pod(kubeconfig: Path, node: str) -> None:
    """A pod no controller recreates, on `node` of the sandbox's clusterA, as kubectl would."""
    api = config.new_client_from_config(str(kubeconfig), context="clusterA")
    with api:
        client.CoreV1Api(api).create_namespaced_pod(
            "default",
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "scratch"},
                "spec": {"nodeName": node, "containers": [{"name": "c", "image": "busybox"}]},
            },
        )


def request_message(page: Page, node: str):  # type: ignore[no-untyped-def]
    return page.locator("article.message", has=page.locator(".block-header", has_text=node))


def test_a_request_typed_approved_and_followed_in_the_browser(sandbox, browser, tmp_path):
    add_bare_pod(tmp_path / "sb" / "kubeconfig", "a-w-1")
    page = browser.new_page(viewport={"width": 1440, "height": 960})
    page.goto(sandbox)
    expect(page.locator(".persona[aria-pressed=true]")).to_contain_text("alice")

    page.fill("#command", "/join a-w-1 from clusterA to clusterB force")
    page.press("#command", "Enter")
    message = request_message(page, "a-w-1")
    expect(message.locator(".block-header")).to_have_text("Move a-w-1: clusterA → clusterB")
    expect(message.locator(".fields")).to_contain_text("Requested by")
    expect(message.locator(".fields .mention")).to_have_text("@alice")
    expect(message.locator(".context").last).to_contain_text("Waiting for an approver")
    expect(page.locator("article.ephemeral")).to_contain_text("Only visible to you")
    approve = message.get_by_role("button", name="Approve")
    expect(approve).to_be_visible()
    expect(message.get_by_role("button", name="Reject")).to_be_visible()

    page.locator(".persona", has_text="bob").click()
    expect(page.locator(".persona[aria-pressed=true]")).to_contain_text("bob")
    expect(page.locator("article.ephemeral")).to_have_count(0)  # alice's, not bob's
    request_message(page, "a-w-1").get_by_role("button", name="Approve").click()
    dialog = page.locator("dialog#confirm")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("delete 1 pod")  # `scratch`: no controller recreates it
    dialog.locator("#confirm-ok").click()

    thread = page.locator("#thread-pane")  # Slack's side pane: the request and its replies
    expect(thread.locator(".block-header")).to_have_text("Move a-w-1: clusterA → clusterB")
    expect(thread).to_contain_text("Step 1/8", timeout=FLOW_TIMEOUT_MS)
    page.close()  # a closed tab stops nothing: the bot and the worker carry on

    page = browser.new_page(viewport={"width": 1440, "height": 960})
    page.goto(sandbox + "#U0SANDBOX1")
    message = request_message(page, "a-w-1")
    expect(message.locator(".context").last).to_contain_text(
        "Succeeded", timeout=FLOW_TIMEOUT_MS
    )  # the root's status line, updated in place
    expect(message.locator(".thread-count")).to_contain_text("replies")
    expect(page.locator("#thread-pane")).to_contain_text("moved from clusterA to clusterB")
    expect(message.get_by_role("button", name="Approve")).to_have_count(0)
    page.screenshot(path=str(tmp_path / "sandbox-slack.png"))
    if SCREENSHOT:
        page.screenshot(path=SCREENSHOT)
