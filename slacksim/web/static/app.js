// The channel page: draws the bot's Block Kit messages from slacksim's state and sends what
// you type and click through slacksim, which signs it and delivers it to the bot like Slack.
"use strict";

const state = { viewer: null, drawn: "", people: {}, command: "/join", thread: null, snapshot: null };
const $ = (id) => document.getElementById(id);

function escapeHtml(text) {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

// Slack text arrives with &, < and > escaped; <…> is a link, a mention or a special word.
function unescapeSlack(text) {
  return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

function angle(inner) {
  const [target, label] = inner.split("|", 2);
  if (target.startsWith("@")) {
    const id = target.slice(1);
    return `<span class="mention">@${escapeHtml(label || state.people[id] || id)}</span>`;
  }
  if (target.startsWith("#")) return `<span class="mention">#${escapeHtml(label || target.slice(1))}</span>`;
  if (target.startsWith("!date^")) return escapeHtml(label || target);
  if (target.startsWith("!")) return `<span class="mention">@${escapeHtml(label || target.slice(1).split("^")[0])}</span>`;
  return `<a href="${escapeHtml(target)}" target="_blank" rel="noreferrer">${escapeHtml(label || target)}</a>`;
}

// The emoji the bot uses, as Slack would draw them; any other :name: stays as typed.
// The emoji the bot uses, drawn as plain symbols in colour (no emoji font needed).
const EMOJI = {
  white_circle: ["○", "#9a9a9a"], red_circle: ["●", "#e01e5a"], white_check_mark: ["✔", "#2eb67d"],
  no_entry: ["⛔", "#e01e5a"], large_green_circle: ["●", "#2eb67d"], hourglass: ["⧗", "#616061"],
  arrows_counterclockwise: ["↻", "#1264a3"], x: ["✘", "#e01e5a"], tada: ["★", "#ecb22e"],
  no_entry_sign: ["⊘", "#e01e5a"], information_source: ["ℹ", "#1264a3"], warning: ["⚠", "#ecb22e"],
  repeat: ["↻", "#1264a3"], lock: ["⚿", "#616061"], leftwards_arrow_with_hook: ["↩", "#1264a3"],
  large_yellow_circle: ["●", "#ecb22e"], large_blue_circle: ["●", "#1264a3"],
  heavy_multiplication_x: ["✘", "#e01e5a"], fast_forward: ["»", "#1264a3"], arrow_forward: ["▶", "#1264a3"],
};

function emoji(html) {
  return html.replace(/:([a-z0-9_+-]+):/g, (whole, name) => {
    const known = EMOJI[name];
    return known ? `<span class="emoji" title=":${name}:" style="color:${known[1]}">${known[0]}</span>` : whole;
  });
}

function inline(text) {
  // Split out <…> first (raw angle brackets are syntax), then format the rest.
  return text.split(/(<[^<>]+>)/).map((part) => {
    if (/^<[^<>]+>$/.test(part)) return angle(part.slice(1, -1));
    let html = escapeHtml(unescapeSlack(part));
    html = html.replace(/(^|[\s(])\*([^*\n]+)\*(?=$|[\s).,:;!?])/g, "$1<b>$2</b>");
    html = html.replace(/(^|[\s(])_([^_\n]+)_(?=$|[\s).,:;!?])/g, "$1<i>$2</i>");
    html = html.replace(/(^|[\s(])~([^~\n]+)~(?=$|[\s).,:;!?])/g, "$1<s>$2</s>");
    return emoji(html);
  }).join("");
}

function mrkdwn(text) {
  // ```blocks``` and `code` keep their content as typed; the rest is formatted line by line.
  return text.split(/(```[\s\S]*?```)/).map((chunk) => {
    if (chunk.startsWith("```") && chunk.endsWith("```") && chunk.length >= 6) {
      return `<pre>${escapeHtml(unescapeSlack(chunk.slice(3, -3)))}</pre>`;
    }
    return chunk.split("\n").map((line) => {
      const quoted = line.startsWith("&gt; ") || line.startsWith("> ");
      const body = quoted ? line.replace(/^(&gt;|>) /, "") : line;
      const html = body.split(/(`[^`\n]+`)/).map((piece) =>
        /^`[^`]+`$/.test(piece) ? `<code>${escapeHtml(unescapeSlack(piece.slice(1, -1)))}</code>` : inline(piece)
      ).join("");
      return quoted ? `<blockquote>${html}</blockquote>` : html;
    }).join("<br>");
  }).join("");
}

function textObject(obj) {
  if (!obj) return "";
  return obj.type === "mrkdwn" ? mrkdwn(obj.text || "") : emoji(escapeHtml(obj.text || ""));
}

function el(tag, className, html) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (html !== undefined) node.innerHTML = html;
  return node;
}

function button(element, message) {
  const node = el("button", `button ${element.style || ""}`.trim(), textObject(element.text));
  node.type = "button";
  node.dataset.actionId = element.action_id || "";
  node.addEventListener("click", async () => {
    if (element.confirm && !(await confirmed(element.confirm))) return;
    node.disabled = true;
    try {
      await post("/api/click", {
        user: state.viewer,
        ts: message.ts,
        action: { action_id: element.action_id, value: element.value, block_id: element.blockId, text: (element.text || {}).text },
      });
    } finally {
      node.disabled = false;
    }
  });
  return node;
}

function confirmed(confirm) {
  const dialog = $("confirm");
  $("confirm-title").innerHTML = textObject(confirm.title);
  $("confirm-text").innerHTML = textObject(confirm.text);
  $("confirm-ok").innerHTML = textObject(confirm.confirm) || "Yes";
  $("confirm-ok").className = `button ${confirm.style || "primary"}`;
  $("confirm-deny").innerHTML = textObject(confirm.deny) || "Cancel";
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "confirm"), { once: true });
    dialog.returnValue = "";
    dialog.showModal();
  });
}

function block(b, message) {
  switch (b.type) {
    case "header":
      return el("div", "block block-header", textObject(b.text));
    case "divider":
      return el("hr", "divider");
    case "section": {
      const node = el("div", "block section");
      const main = el("div", "section-text", textObject(b.text));
      if (b.accessory && b.accessory.type === "button") {
        node.classList.add("section-with-accessory");
        node.append(main, button({ ...b.accessory, blockId: b.block_id }, message));
      } else {
        node.append(main);
      }
      if (b.fields) {
        const fields = el("div", "fields");
        for (const f of b.fields) fields.append(el("div", "field", textObject(f)));
        node.append(fields);
      }
      return node;
    }
    case "context": {
      const node = el("div", "block context");
      for (const e of b.elements || []) {
        node.append(e.type === "image" ? Object.assign(el("img"), { src: e.image_url, alt: e.alt_text || "", width: 16 }) : el("span", "", textObject(e)));
      }
      return node;
    }
    case "actions": {
      const node = el("div", "block actions");
      for (const e of b.elements || []) {
        if (e.type === "button") node.append(button({ ...e, blockId: b.block_id }, message));
        else node.append(el("span", "unsupported", `[${escapeHtml(e.type)}]`));
      }
      return node;
    }
    case "rich_text":
      return el("div", "block", escapeHtml(message.text || ""));
    default:
      return el("div", "block unsupported", `[a ${escapeHtml(b.type)} block]`);
  }
}

function messageNode(message) {
  const node = el("article", `message${message.ephemeral ? " ephemeral" : ""}`);
  node.dataset.ts = message.ts;
  const name = state.people[message.user] || message.user || "?";
  node.append(el("div", "avatar", escapeHtml(name.slice(0, 1).toUpperCase())));
  const body = el("div", "body");
  const author = el("div", "author", escapeHtml(name));
  if (message.bot) author.append(el("span", "app-tag", "APP"));
  body.append(author);
  if (message.ephemeral) body.append(el("div", "only-you", "Only visible to you"));
  if (message.blocks.length) for (const b of message.blocks) body.append(block(b, message));
  else body.append(el("div", "block", mrkdwn(message.text)));
  if (message.replies && message.replies.length) {
    const n = message.replies.length;
    const link = el("button", "thread-count", `${n} ${n === 1 ? "reply" : "replies"}`);
    link.type = "button";
    link.addEventListener("click", () => { state.thread = message.ts; drawThread(); });
    body.append(link);
  }
  node.append(body);
  return node;
}

function draw(snapshot) {
  state.people = snapshot.people;
  state.command = snapshot.command;
  $("channel-name").textContent = snapshot.title;
  $("channel-title").textContent = snapshot.title;
  const personas = $("personas");
  personas.replaceChildren(...snapshot.personas.map((p) => {
    const b = el("button", "persona", `${escapeHtml(p.name)}<small>${escapeHtml(p.part)}</small>`);
    b.type = "button";
    b.dataset.user = p.id;
    b.setAttribute("aria-pressed", String(p.id === state.viewer));
    b.addEventListener("click", () => switchTo(p.id));
    return b;
  }));
  const list = $("messages");
  const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  list.replaceChildren(...snapshot.messages.map(messageNode));
  if (atBottom) list.scrollTop = list.scrollHeight;
  state.snapshot = snapshot;
  drawThread();
}

// Slack's thread pane: the chosen message (by default the newest with replies) and its replies.
function drawThread() {
  const roots = state.snapshot ? state.snapshot.messages.filter((m) => m.replies.length) : [];
  const root = roots.find((m) => m.ts === state.thread) || roots[roots.length - 1];
  const pane = $("thread-pane");
  pane.hidden = !root;
  if (!root) return;
  const list = $("thread-messages");
  const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  list.replaceChildren(
    messageNode({ ...root, replies: [] }),
    el("div", "thread-divider", `${root.replies.length} ${root.replies.length === 1 ? "reply" : "replies"}`),
    ...root.replies.map((reply) => messageNode({ ...reply, replies: [] })),
  );
  if (atBottom) list.scrollTop = list.scrollHeight;
}

function showError(text) {
  const box = $("error");
  box.textContent = text || "";
  box.hidden = !text;
}

async function post(path, body) {
  try {
    const answer = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    const data = await answer.json();
    if (!answer.ok) showError(data.error || `HTTP ${answer.status}`);
    else if (data.status !== 200) showError(`The bot answered HTTP ${data.status}.`);
    else showError("");
  } catch (e) {
    showError(`The sandbox did not answer (${e}). Is \`joinops sandbox --slack\` still running?`);
  }
  refresh();
}

async function refresh() {
  try {
    const answer = await fetch(`/api/state?user=${encodeURIComponent(state.viewer)}`);
    const snapshot = await answer.json();
    const text = JSON.stringify(snapshot);
    if (text !== state.drawn) {
      state.drawn = text;
      draw(snapshot);
    }
  } catch (e) {
    showError(`The sandbox did not answer (${e}).`);
  }
}

function switchTo(user) {
  state.viewer = user;
  state.drawn = "";
  history.replaceState(null, "", `#${user}`);
  refresh();
}

$("composer").addEventListener("submit", async (event) => {
  event.preventDefault();
  const input = $("command");
  const typed = input.value.trim();
  const command = state.command;
  if (typed !== command && !typed.startsWith(`${command} `)) {
    showError(`This channel takes slash commands: type ${command} followed by what to do (${command} help).`);
    return;
  }
  input.value = "";
  await post("/api/command", { user: state.viewer, text: typed.slice(command.length).trim() });
});

async function start() {
  const { personas } = await (await fetch("/api/people")).json();
  const hash = location.hash.slice(1);
  state.viewer = personas.some((p) => p.id === hash) ? hash : personas[0].id;
  await refresh();
  setInterval(refresh, 500);
}

start();
