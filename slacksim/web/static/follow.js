// How a Slack channel (or thread) scrolls: while you are at the newest message, whatever comes
// (a new message, an answer only you see, a message growing or the pane narrowing) keeps the
// newest in view; once you scroll up, nothing moves what you read, and a marker says that new
// messages came (a click on it takes you down to them).
"use strict";

class Follower {
  // `pane`: an element holding the scrolling `.messages`, its `.feed` and a `.new-messages` marker.
  constructor(pane) {
    this.list = pane.querySelector(".messages");
    this.feed = pane.querySelector(".feed");
    this.marker = pane.querySelector(".new-messages");
    this.following = true;
    this.pinnedTop = null; // where this code last scrolled to: its own scroll events are not the reader's
    this.newest = undefined;
    this.list.addEventListener("scroll", () => this.scrolled());
    this.marker.addEventListener("click", () => this.follow());
    const keep = new ResizeObserver(() => this.keep());
    keep.observe(this.list);
    keep.observe(this.feed);
  }

  atBottom() {
    return this.list.scrollHeight - this.list.scrollTop - this.list.clientHeight <= 2;
  }

  scrolled() {
    if (this.atBottom()) {
      this.following = true;
      this.marker.hidden = true;
    } else if (this.list.scrollTop !== this.pinnedTop) {
      this.following = false; // the reader scrolled up
    }
  }

  keep() {
    if (this.following) this.pin();
  }

  pin() {
    this.list.scrollTop = this.list.scrollHeight;
    this.pinnedTop = this.list.scrollTop;
    this.marker.hidden = true;
  }

  // Back to the newest (the reader sent something, chose a thread, or clicked the marker).
  follow() {
    this.following = true;
    this.pin();
  }

  // The feed's messages replaced by `nodes` (each with data-ts), the view kept as described above.
  redraw(nodes) {
    const anchor = this.following ? null : this.anchor();
    this.feed.replaceChildren(...nodes);
    const newest = nodes.length ? nodes[nodes.length - 1].dataset.ts : null;
    if (this.following) {
      this.pin();
    } else {
      this.restore(anchor);
      if (this.newest !== undefined && newest !== this.newest) this.marker.hidden = false;
    }
    this.newest = newest;
  }

  // The first message in view and how far below the pane's top it is.
  anchor() {
    const top = this.list.getBoundingClientRect().top;
    for (const message of this.feed.children) {
      const box = message.getBoundingClientRect();
      if (box.bottom > top) return { ts: message.dataset.ts, offset: box.top - top };
    }
    return null;
  }

  restore(anchor) {
    const same = anchor && [...this.feed.children].find((m) => m.dataset.ts === anchor.ts);
    if (!same) return;
    const offset = same.getBoundingClientRect().top - this.list.getBoundingClientRect().top;
    this.list.scrollTop += offset - anchor.offset;
    this.pinnedTop = this.list.scrollTop;
  }
}
