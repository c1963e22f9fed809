"""The channel page (slacksim.web) draws messages as Slack does and follows new ones, in headless
Chromium: what the bot posts (chat.postMessage, chat.update, chat.postEphemeral through the
official `slack_sdk` client, over HTTP to slacksim) is what the page shows.

The Slack behaviour stood for: mrkdwn as in Slack's "Formatting text for app surfaces" (`&amp;`,
`&lt;`, `&gt;` decoded once; `*bold*`, `_italic_`, `~strike~` only at word boundaries; `code` and
```pre``` verbatim; `<@U…>` a mention by name, `<!channel>`, `<url|label>`), the emoji codes Slack
draws (a code it does not know stays as typed), and a channel that keeps the newest message in
view unless the reader scrolled up (then nothing moves, and a marker says new messages came).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect
from slack_sdk import WebClient

from slacksim import SlackSim
from slacksim.tiers import Tiers
from slacksim.web import CHANNEL_ID, ChannelPage, Person
from tests.support.browser import (
    THREAD,
    VIEWPORT,
    chromium,
    in_view,
    scroll_up,
    wait_newest_in_view,
)

ROOT = Path(__file__).resolve().parents[2]
EMOJI = json.loads((ROOT / "slacksim/web/static/emoji.json").read_text(encoding="utf-8"))
ALICE = Person("U0ALICE001", "alice", "requester")
BOB = Person("U0BOB00001", "bob", "approver")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def sim() -> Iterator[SlackSim]:
    with SlackSim(tiers=Tiers.off()) as sim:
        yield sim


@pytest.fixture
def bot(sim: SlackSim) -> WebClient:
    return WebClient(token=sim.token, base_url=sim.api_url)


@pytest.fixture
def page(sim: SlackSim, browser: Browser) -> Iterator[Page]:
    """The page as alice sees it (no app behind it: the bot's posts come through `bot`)."""
    with ChannelPage(sim, "http://127.0.0.1:9/no-app", "secret", [ALICE, BOB]) as channel:
        tab = browser.new_page(viewport=VIEWPORT, locale="en-US", timezone_id="Europe/Paris")
        tab.goto(channel.url)
        expect(tab.locator(".persona[aria-pressed=true]")).to_contain_text("alice")
        yield tab
        tab.close()


def section(text: str) -> dict:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def posted(bot: WebClient, page: Page, *texts: str, **fields: object) -> str:
    """Posts one message of mrkdwn sections in the channel; its ts, once the page shows it."""
    blocks = [section(text) for text in texts]
    ts = bot.chat_postMessage(channel=CHANNEL_ID, text=texts[0], blocks=blocks, **fields)["ts"]
    expect(page.locator(f"article[data-ts='{ts}']").first).to_be_attached()
    return str(ts)


def texts_modules() -> list[Path]:
    """Where every user-facing string lives (the brief's texts modules)."""
    found = sorted((ROOT / "bot" / "texts").glob("*.py"))
    for package in ("bot", "cli", "joinops", "workers"):
        found += sorted((ROOT / package).rglob("texts.py"))
        found += sorted((ROOT / package).rglob("*_texts.py"))
    return sorted(set(found))


def test_every_emoji_code_the_bot_writes_is_in_the_pages_table() -> None:
    code = re.compile(r"(?<![\w:]):([a-z0-9_+-]+):(?!\w)")  # not `system:node:NAME`
    used = {m for path in texts_modules() for m in code.findall(path.read_text())}
    assert {"inbox_tray", "hourglass_flowing_sand", "tada", "red_circle"} <= used
    assert sorted(used - set(EMOJI)) == []


def test_emoji_codes_are_drawn_and_an_unknown_one_stays_as_typed(bot, page) -> None:
    codes = " ".join(f":{name}:" for name in EMOJI)
    ts = bot.chat_postMessage(
        channel=CHANNEL_ID,
        text="emoji",
        blocks=[
            {
                "type": "header",
                "text": {"type": "plain_text", "text": ":tada: Done", "emoji": True},
            },
            section(f"{codes} :party_parrot_custom:"),
        ],
    )["ts"]
    message = page.locator(f"article[data-ts='{ts}']")
    expect(message.locator(".emoji")).to_have_count(len(EMOJI) + 1)
    shown = message.inner_text()
    assert [name for name in EMOJI if f":{name}:" in shown] == []
    assert all(symbol in shown for symbol in EMOJI.values())
    assert ":party_parrot_custom:" in shown  # Slack shows a custom emoji it lacks as typed
    expect(message.locator(".block-header")).to_have_text(f"{EMOJI['tada']} Done")


def test_mrkdwn_is_drawn_as_slack_draws_it(bot, page) -> None:
    ts = posted(
        bot,
        page,
        "*Hosts seen in `sandbox/hosts.d` (3)*",
        "_slanted_ and ~struck~, not snake_case_name nor 2*3*4 nor * spaced *",
        "&lt;b&gt;typed&lt;/b&gt; &amp;lt; &lt;img src=x onerror=alert(1)&gt; &amp; done",
        "<@U0ALICE001> and <!channel>: <https://example.com/docs|the docs>, "
        "<javascript:alert(1)|x>",
        "`*not bold*` then ```*pre* <@U0BOB00001>```",
        "&gt; quoted *line*",
        "<!date^1796464836^{date_num} at {time}|10:00 UTC>, <!date^x^{time}|some day>",
    )
    message = page.locator(f"article[data-ts='{ts}']")
    expect(message.locator("b").first).to_have_text("Hosts seen in sandbox/hosts.d (3)")
    expect(message.locator("b code")).to_have_text("sandbox/hosts.d")
    expect(message.locator("i")).to_have_text(["slanted"])
    expect(message.locator("s")).to_have_text(["struck"])
    shown = message.inner_text()
    assert "*Hosts" not in shown and "snake_case_name" in shown and "2*3*4" in shown
    assert "* spaced *" in shown
    assert "<b>typed</b> &lt; <img src=x onerror=alert(1)> & done" in shown  # decoded once
    expect(message.locator("img")).to_have_count(0)  # shown, never made markup
    expect(message.locator(".mention")).to_have_text(["@alice", "@channel"])
    expect(message.locator("a")).to_have_count(1)
    expect(message.locator("a")).to_have_attribute("href", "https://example.com/docs")
    expect(message.locator("a")).to_have_text("the docs")
    expect(message.locator("code").last).to_have_text("*not bold*")
    expect(message.locator("pre")).to_have_text("*pre* @bob")
    expect(message.locator("blockquote")).to_have_text("quoted line")
    expect(message.locator("blockquote b")).to_have_text("line")
    assert "<javascript:alert(1)|x>" not in shown and "x" in shown
    assert "2026-12-05 at 11:00 AM, some day" in shown  # the reader's zone; else the fallback


def test_the_channel_follows_new_messages_until_the_reader_scrolls_up(bot, page) -> None:
    for n in range(1, 21):
        posted(bot, page, f"*message {n}*\nline two\nline three")
    wait_newest_in_view(page, "message 20")
    bot.chat_postEphemeral(channel=CHANNEL_ID, user=ALICE.user_id, text="*only* for alice")
    wait_newest_in_view(page, "only for alice")  # an answer only she sees comes into view

    top = scroll_up(page)
    anchor = page.locator("article.message", has_text="message 12").first
    before = anchor.bounding_box()
    ts = posted(bot, page, "*message 21*")
    expect(page.locator(".new-messages").first).to_be_visible()
    assert page.locator("#messages").evaluate("list => list.scrollTop") == top  # not yanked
    assert anchor.bounding_box() == before
    assert not in_view(page, "message 21")

    page.locator(".new-messages").first.click()
    wait_newest_in_view(page, "message 21")
    expect(page.locator(".new-messages").first).to_be_hidden()

    count = page.locator("article.message").count()
    bot.chat_update(channel=CHANNEL_ID, ts=ts, text="edited", blocks=[section("*edited 21*")])
    wait_newest_in_view(page, "edited 21")  # changed in place: still the newest, nothing added
    assert page.locator("article.message").count() == count


def test_a_reload_shows_the_newest_message_and_reply(bot, page) -> None:
    root = posted(bot, page, "*the request*")
    for n in range(1, 13):
        bot.chat_postMessage(
            channel=CHANNEL_ID, thread_ts=root, text=f"step {n}", blocks=[section(f"step {n}")]
        )
    words = " ".join(["a line long enough to wrap once the thread pane takes its place"] * 3)
    for n in range(1, 13):
        posted(bot, page, f"later {n}: {words}")
    page.reload()
    wait_newest_in_view(page, "later 12")
    wait_newest_in_view(page, "step 12", pane=THREAD)  # the thread pane opened after the list


def test_a_button_with_a_confirmation_asks_first(bot, page) -> None:
    confirm = {
        "title": {"type": "plain_text", "text": "Delete 1 pod for good?"},
        "text": {"type": "mrkdwn", "text": "*force*: `default/scratch` is not recreated"},
        "confirm": {"type": "plain_text", "text": "Approve and delete"},
        "deny": {"type": "plain_text", "text": "Back"},
        "style": "danger",
    }
    approve = {"type": "button", "action_id": "approve", "value": "r", "confirm": confirm}
    approve["text"] = {"type": "plain_text", "text": "Approve"}
    ts = bot.chat_postMessage(
        channel=CHANNEL_ID, text="a request", blocks=[{"type": "actions", "elements": [approve]}]
    )["ts"]
    page.locator(f"article[data-ts='{ts}']").get_by_role("button", name="Approve").click()
    dialog = page.locator("dialog#confirm")
    expect(dialog.locator("h2")).to_have_text("Delete 1 pod for good?")
    expect(dialog.locator(".confirm-text b")).to_have_text("force")
    expect(dialog.locator(".confirm-text code")).to_have_text("default/scratch")
    dialog.get_by_role("button", name="Back").click()
    expect(dialog).to_be_hidden()
    expect(page.locator("#error")).to_be_hidden()  # nothing sent

    page.locator(f"article[data-ts='{ts}']").get_by_role("button", name="Approve").click()
    dialog.get_by_role("button", name="Approve and delete").click()
    expect(page.locator("#error")).to_contain_text("did not answer")  # sent: no app here
