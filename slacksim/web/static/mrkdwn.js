// Slack's text formatting, drawn as Slack draws it: mrkdwn and plain_text become DOM nodes
// (never HTML strings, so nothing in a message can inject markup).
//
// The rules followed (Slack's "Formatting text for app surfaces"):
// - `&amp;`, `&lt;` and `&gt;` are the escaped `&`, `<`, `>`: decoded once, for display only;
//   a raw `<…>` is markup: `<@U…>` a mention (the person's name), `<#C…>` a channel,
//   `<!here>`/`<!channel>`/`<!everyone>`, `<!subteam^S…>` a user group, `<!date^…|fallback>` a
//   time in the reader's zone, `<url>` and `<url|label>` a link.
// - *bold*, _italic_ and ~strike~ need a word boundary: the opening mark at the start or after a
//   character that is not a letter or digit, then no space; the closing one after no space, then
//   the end or a character that is not a letter or digit (`snake_case`, `2*3*4` stay as typed).
//   They stay within a line, may hold `code`, links and each other.
// - `code` and ```pre``` show their content as typed (no formatting, no emoji).
// - `>` at the start of a line quotes it; `>>>` quotes the rest of the message.
// - :name: is an emoji of the table (emoji.json); any other :name: stays as typed, as Slack
//   shows a custom emoji the workspace does not have.
"use strict";

const Mrkdwn = (() => {
  const context = { emoji: {}, people: {}, channels: {} };
  const WORD = /[\p{L}\p{N}]/u;
  const MARKS = { "*": "b", _: "i", "~": "s" };
  const SPECIAL = { here: "@here", channel: "@channel", everyone: "@everyone" };

  function decode(text) {
    return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
  }

  function node(tag, className, children = []) {
    const made = document.createElement(tag);
    if (className) made.className = className;
    made.append(...children);
    return made;
  }

  function emojiNode(name) {
    const made = node("span", "emoji", [context.emoji[name]]);
    made.title = `:${name}:`;
    made.setAttribute("role", "img");
    made.setAttribute("aria-label", name.replace(/_/g, " "));
    return made;
  }

  // A `<…>` token, drawn; `inCode`: inside `code`, where Slack shows it as text.
  function token(inner, inCode) {
    const bar = inner.indexOf("|");
    const target = bar < 0 ? inner : inner.slice(0, bar);
    const label = bar < 0 ? "" : decode(inner.slice(bar + 1));
    if (target.startsWith("!date^")) return slackDate(target, label);
    let shown;
    if (target.startsWith("@")) shown = `@${context.people[target.slice(1)] || label || target.slice(1)}`;
    else if (target.startsWith("#")) shown = `#${context.channels[target.slice(1)] || label || target.slice(1)}`;
    else if (target.startsWith("!subteam^")) shown = label || `@${target.split("^")[1]}`;
    else if (target.startsWith("!")) shown = SPECIAL[target.slice(1)] || label || `@${target.slice(1)}`;
    else return inCode ? label || decode(target) : link(decode(target), label);
    return inCode ? shown : node("span", "mention", [shown]);
  }

  function link(url, label) {
    if (!/^(https?:|mailto:)/i.test(url)) return label || url; // Slack links web and mail only
    const made = node("a", "", [label || url]);
    made.href = url;
    made.target = "_blank";
    made.rel = "noreferrer";
    return made;
  }

  // `<!date^UNIX^FORMAT|fallback>`: the time in the reader's own zone and language, as Slack
  // shows it; "today", "yesterday" or "tomorrow" for the *_pretty dates (capitalised first).
  function slackDate(target, fallback) {
    const [, seconds, format] = target.split("^");
    const when = new Date(Number(seconds) * 1000);
    if (!format || Number.isNaN(when.getTime())) return fallback;
    const day = (options) => when.toLocaleDateString(undefined, options);
    const two = (n) => String(n).padStart(2, "0");
    const words = {
      date_num: `${when.getFullYear()}-${two(when.getMonth() + 1)}-${two(when.getDate())}`,
      date_slash: `${two(when.getDate())}/${two(when.getMonth() + 1)}/${when.getFullYear()}`,
      date: day({ year: "numeric", month: "long", day: "numeric" }),
      date_short: day({ year: "numeric", month: "short", day: "numeric" }),
      date_long: day({ weekday: "long", year: "numeric", month: "long", day: "numeric" }),
      date_long_full: day({ year: "numeric", month: "long", day: "numeric" }),
      time: when.toLocaleTimeString(undefined, { hour: "numeric", minute: "2-digit" }),
      time_secs: when.toLocaleTimeString(undefined, { hour: "numeric", minute: "2-digit", second: "2-digit" }),
    };
    const days = Math.round((startOfDay(when) - startOfDay(new Date())) / 86_400_000);
    const near = { 0: "today", "-1": "yesterday", 1: "tomorrow" }[days];
    for (const kind of ["date", "date_short", "date_long"]) words[`${kind}_pretty`] = near || words[kind];
    return format.replace(/\{(\w+)\}/g, (whole, word, at) => {
      const shown = words[word] ?? whole;
      return at === 0 && shown === near ? shown[0].toUpperCase() + shown.slice(1) : shown;
    });
  }

  function startOfDay(date) {
    return new Date(date.getFullYear(), date.getMonth(), date.getDate()).getTime();
  }

  // Where the `<…>` or `code` starting at `i` ends (index after it), or -1.
  function spanEnd(text, i) {
    if (text[i] === "<") {
      const close = text.slice(i + 1).search(/[<>\n]/);
      return close >= 0 && text[i + 1 + close] === ">" && close > 0 ? i + close + 2 : -1;
    }
    if (text[i] === "`") {
      const close = text.indexOf("`", i + 1);
      return close > i + 1 ? close + 1 : -1;
    }
    return -1;
  }

  function opens(text, i) {
    const before = text[i - 1];
    const after = text[i + 1];
    return (before === undefined || !WORD.test(before)) && after !== undefined && !/\s/.test(after);
  }

  function closing(text, i, mark) {
    for (let j = i + 1; j < text.length && text[j] !== "\n"; j += 1) {
      const skip = spanEnd(text, j);
      if (skip > 0) {
        j = skip - 1;
        continue;
      }
      const after = text[j + 1];
      const ends = after === undefined || !WORD.test(after);
      if (text[j] === mark && j > i + 1 && !/\s/.test(text[j - 1]) && ends) return j;
    }
    return -1;
  }

  // One line's inline formatting (or a bold/italic/strike span's content), as nodes.
  function inline(text) {
    const out = [];
    let plain = "";
    const flush = () => {
      if (plain) out.push(decode(plain));
      plain = "";
    };
    for (let i = 0; i < text.length; i += 1) {
      const c = text[i];
      const end = spanEnd(text, i);
      if (end > 0) {
        flush();
        out.push(c === "<" ? token(text.slice(i + 1, end - 1), false) : code(text.slice(i + 1, end - 1)));
        i = end - 1;
        continue;
      }
      if (MARKS[c] && opens(text, i)) {
        const close = closing(text, i, c);
        if (close > 0) {
          flush();
          out.push(node(MARKS[c], "", inline(text.slice(i + 1, close))));
          i = close;
          continue;
        }
      }
      const emoji = c === ":" && /^:([a-z0-9_+-]+):/.exec(text.slice(i));
      if (emoji && context.emoji[emoji[1]]) {
        flush();
        out.push(emojiNode(emoji[1]));
        i += emoji[0].length - 1;
        continue;
      }
      plain += c;
    }
    flush();
    return out;
  }

  // `code` and ```pre```: the content as typed; a `<…>` in it shows as its text.
  function verbatim(text) {
    return text.split(/(<[^<>\n]+>)/).map((part, k) => (k % 2 ? token(part.slice(1, -1), true) : decode(part)));
  }

  function code(text) {
    return node("code", "", verbatim(text));
  }

  function lines(text) {
    const out = [];
    const all = text.split("\n");
    for (let k = 0; k < all.length; k += 1) {
      if (k > 0 && !/^(&gt;|>)/.test(all[k - 1])) out.push(document.createElement("br")); // a quote ends its line
      const rest = /^(&gt;&gt;&gt;|>>>) ?/.exec(all[k]);
      if (rest) { // the rest of the message is quoted
        out.push(node("blockquote", "", lines(all.slice(k).join("\n").slice(rest[0].length))));
        break;
      }
      const quoted = /^(&gt;|>) ?/.exec(all[k]);
      if (quoted) out.push(node("blockquote", "", inline(all[k].slice(quoted[0].length))));
      else out.push(...inline(all[k]));
    }
    return out;
  }

  // A mrkdwn text, as nodes.
  function mrkdwn(text) {
    const out = [];
    text.split(/```([\s\S]*?)```/).forEach((chunk, k) => {
      if (k % 2) out.push(node("pre", "", verbatim(chunk.replace(/^\n/, ""))));
      else if (chunk) out.push(...lines(chunk));
    });
    return out;
  }

  // A plain_text text, as nodes: as typed, with emoji codes drawn unless `emoji` is false.
  function plainText(text, emoji = true) {
    if (!emoji) return [text];
    return text.split(/(:[a-z0-9_+-]+:)/).map((part, k) => {
      const name = part.slice(1, -1);
      return k % 2 && context.emoji[name] ? emojiNode(name) : part;
    });
  }

  // A Block Kit text object (mrkdwn or plain_text), as nodes.
  function textObject(object) {
    if (!object) return [];
    const text = object.text || "";
    return object.type === "mrkdwn" ? mrkdwn(text) : plainText(text, object.emoji !== false);
  }

  return { context, mrkdwn, plainText, textObject };
})();
