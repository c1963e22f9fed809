// The channel page: draws the bot's Block Kit messages from slacksim's state and sends what
// you type and click through slacksim, which signs it and delivers it to the bot like Slack.
// Text is drawn by mrkdwn.js (as DOM nodes); scrolling follows the newest by follow.js.
"use strict";

const state = { viewer: null, drawn: "", command: "/join", thread: null, snapshot: null };
const $ = (id) => document.getElementById(id);
const channel = new Follower($("channel-pane"));
const thread = new Follower($("thread-pane"));

function el(tag, className, ...children) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  node.append(...children);
  return node;
}

const textObject = (object) => Mrkdwn.textObject(object);

function button(element, message) {
  const node = el("button", `button ${element.style || ""}`.trim(), ...textObject(element.text));
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
  const fill = (id, object, otherwise) => {
    const shown = textObject(object);
    $(id).replaceChildren(...(shown.length ? shown : [otherwise]));
  };
  fill("confirm-title", confirm.title, "");
  fill("confirm-text", confirm.text, "");
  fill("confirm-ok", confirm.confirm, "Yes");
  fill("confirm-deny", confirm.deny, "Cancel");
  $("confirm-ok").className = `button ${confirm.style || "primary"}`;
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "confirm"), { once: true });
    dialog.returnValue = "";
    dialog.showModal();
  });
}

function section(b, message) {
  const node = el("div", "block section");
  const main = el("div", "section-text", ...textObject(b.text));
  if (b.accessory && b.accessory.type === "button") {
    node.classList.add("section-with-accessory");
    node.append(main, button({ ...b.accessory, blockId: b.block_id }, message));
  } else {
    node.append(main);
  }
  if (b.fields) node.append(el("div", "fields", ...b.fields.map((f) => el("div", "field", ...textObject(f)))));
  return node;
}

function contextElement(e) {
  if (e.type !== "image") return el("span", "", ...textObject(e));
  return Object.assign(el("img"), { src: e.image_url, alt: e.alt_text || "", width: 16 });
}

function block(b, message) {
  switch (b.type) {
    case "header":
      return el("div", "block block-header", ...textObject(b.text));
    case "divider":
      return el("hr", "divider");
    case "section":
      return section(b, message);
    case "context":
      return el("div", "block context", ...(b.elements || []).map(contextElement));
    case "actions":
      return el("div", "block actions", ...(b.elements || []).map((e) =>
        e.type === "button" ? button({ ...e, blockId: b.block_id }, message) : el("span", "unsupported", `[${e.type}]`)));
    case "rich_text":
      return el("div", "block", ...Mrkdwn.mrkdwn(message.text || ""));
    default:
      return el("div", "block unsupported", `[a ${b.type} block]`);
  }
}

function messageNode(message) {
  const node = el("article", `message${message.ephemeral ? " ephemeral" : ""}`);
  node.dataset.ts = message.ts;
  const name = Mrkdwn.context.people[message.user] || message.user || "?";
  const author = el("div", "author", name);
  if (message.bot) author.append(el("span", "app-tag", "APP"));
  const body = el("div", "body", author);
  if (message.ephemeral) body.append(el("div", "only-you", "Only visible to you"));
  if (message.blocks.length) body.append(...message.blocks.map((b) => block(b, message)));
  else body.append(el("div", "block", ...Mrkdwn.mrkdwn(message.text)));
  if (message.replies && message.replies.length) {
    const n = message.replies.length;
    const link = el("button", "thread-count", `${n} ${n === 1 ? "reply" : "replies"}`);
    link.type = "button";
    link.addEventListener("click", () => openThread(message.ts));
    body.append(link);
  }
  node.append(el("div", "avatar", name.slice(0, 1).toUpperCase()), body);
  return node;
}

function personaButton(p) {
  const b = el("button", "persona", p.name, el("small", "", p.part));
  b.type = "button";
  b.dataset.user = p.id;
  b.setAttribute("aria-pressed", String(p.id === state.viewer));
  b.addEventListener("click", () => switchTo(p.id));
  return b;
}

function draw(snapshot) {
  Mrkdwn.context.people = snapshot.people;
  Mrkdwn.context.channels = { [snapshot.channel]: snapshot.title };
  state.command = snapshot.command;
  $("channel-name").textContent = snapshot.title;
  $("channel-title").textContent = snapshot.title;
  $("personas").replaceChildren(...snapshot.personas.map(personaButton));
  state.snapshot = snapshot;
  channel.redraw(snapshot.messages.map(messageNode));
  drawThread();
}

// Slack's thread pane: the chosen message (by default the newest with replies) and its replies.
function drawThread() {
  const roots = state.snapshot ? state.snapshot.messages.filter((m) => m.replies.length) : [];
  const root = roots.find((m) => m.ts === state.thread) || roots[roots.length - 1];
  const pane = $("thread-pane");
  pane.hidden = !root;
  if (!root) return;
  if (pane.dataset.root !== root.ts) thread.follow(); // another thread: start at its newest
  pane.dataset.root = root.ts;
  const n = root.replies.length;
  thread.redraw([
    messageNode({ ...root, replies: [] }),
    el("div", "thread-divider", `${n} ${n === 1 ? "reply" : "replies"}`),
    ...root.replies.map((reply) => messageNode({ ...reply, replies: [] })),
  ]);
}

function openThread(ts) {
  state.thread = ts;
  drawThread();
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
  await refresh();
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
  channel.follow(); // like opening the channel: at its newest
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
  channel.follow(); // Slack takes you to the newest when you send
  await post("/api/command", { user: state.viewer, text: typed.slice(command.length).trim() });
});

async function start() {
  const [{ personas }, emoji] = await Promise.all(["/api/people", "/emoji.json"].map(async (path) => (await fetch(path)).json()));
  Mrkdwn.context.emoji = emoji;
  const hash = location.hash.slice(1);
  state.viewer = personas.some((p) => p.id === hash) ? hash : personas[0].id;
  await refresh();
  setInterval(refresh, 500);
}

start();
