"""The channel page (slacksim.web) in a real browser: Debian's Chromium, headless, driven by
playwright (never a browser playwright downloads), and what a reader of the page sees of it.

A message is "in view" when its bottom edge is inside the scrolling list's visible box (one
taller than the list is in view when its end is: that is where Slack leaves you).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import Browser, Page, sync_playwright

CHROMIUM = "/usr/bin/chromium"  # Debian's package (scripts/test-tools.sh installs it)
VIEWPORT = {"width": 1440, "height": 960}
WAIT_MS = 60_000  # for the page to show something: generous for a machine ten times busier

CHANNEL = "#messages"
THREAD = "#thread-messages"

_NEWEST_IN_VIEW = """([list, text]) => {
  const pane = document.querySelector(list);
  const all = pane.querySelectorAll("article.message");
  const newest = all[all.length - 1];
  if (!newest || !newest.innerText.includes(text)) return false;
  const shown = pane.getBoundingClientRect();
  const box = newest.getBoundingClientRect();
  return box.bottom <= shown.bottom + 1 && box.bottom > shown.top;
}"""

_IN_VIEW = """([list, text]) => {
  const pane = document.querySelector(list);
  const shown = pane.getBoundingClientRect();
  return [...pane.querySelectorAll("article.message")].some((m) => {
    const box = m.getBoundingClientRect();
    return m.innerText.includes(text) && box.bottom <= shown.bottom + 1 && box.bottom > shown.top;
  });
}"""


@contextmanager
def chromium() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-smooth-scrolling"],  # a wheel turn lands at once
        )
        try:
            yield browser
        finally:
            browser.close()


def wait_newest_in_view(
    page: Page, text: str, pane: str = CHANNEL, timeout: float = WAIT_MS
) -> None:
    """Waits until the newest message of `pane` says `text` and is in view (the page follows
    new messages on its own: nothing here scrolls)."""
    page.wait_for_function(_NEWEST_IN_VIEW, arg=[pane, text], timeout=timeout)


def in_view(page: Page, text: str, pane: str = CHANNEL) -> bool:
    """Whether a message of `pane` saying `text` is in view now."""
    return bool(page.evaluate(_IN_VIEW, [pane, text]))


def scroll_up(page: Page, pane: str = CHANNEL) -> float:
    """The reader scrolls `pane` up with the mouse wheel; its scroll position once it moved."""
    box = page.locator(pane).bounding_box()
    assert box is not None, f"{pane} is not shown"
    before = page.locator(pane).evaluate("list => list.scrollTop")
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -600)
    page.wait_for_function(
        "([list, before]) => document.querySelector(list).scrollTop < before", arg=[pane, before]
    )
    return float(page.locator(pane).evaluate("list => list.scrollTop"))
