"""The `/join` command grammar: the text of a slash command in, a typed command out.

Forms (keywords in any case, any whitespace between words)::

    NODE [NODE ...] [from SOURCE] to TARGET [as ROLE] [for DURATION] [force]   -> Migrate
    all from SOURCE to TARGET [for DURATION] [force]                           -> MigrateAll
    ignition CLUSTER [as ROLE]                          -> Ignition
    status [REQUEST_ID] | cancel REQUEST_ID | retry REQUEST_ID
    help | clusters | list | loans | arrivals | (nothing)
                                        -> Help, Clusters, List, Loans, Arrivals, Help

The typed commands are `bot.parsed`'s. Anything else raises GrammarError(message, usage);
`str(error)` is the reply to show.

Decisions:
- ROLE is `worker` (the default) or `control-plane`; `controlplane` and `cp` are accepted for
  control-plane. `master` is refused with a suggestion (kubeadm no longer uses the word).
- `from SOURCE` may follow several nodes too; without it, source is None (looked up later).
- A closing `force` (any case) asks for a forced drain: pods no controller recreates, and pods on
  node-local volumes, are deleted (`kubectl drain --force`). It is a keyword only as the last
  word and not right after `to`, `from` or `as`, so a cluster named `force` can still be a target.
- A closing `for DURATION` (before or after `force`) lends the nodes: the word is kept as typed
  and checked against the policy's range by `bot.loans` (which knows the settings).
- The first word decides the form: a node literally named `all`, `list`, `status`, ... can only
  be moved when it is not the first node named.
- Node names are taken exactly as typed and must be DNS-1123 subdomains, as Kubernetes node
  names are: `Node-1` is refused with the reason rather than lower-cased behind the user's back.
- Cluster names match in any case and come back spelled as configured; request ids match in any
  case and come back lower-case.
- A near miss of `from`/`to` in the node list (`node-1 form prod to dev`) is taken as a typo when
  the next word is a known cluster; where a keyword is required, any near miss is reported.
"""

from __future__ import annotations

import difflib
import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import NoReturn

from bot.parsed import (
    Arrivals,
    Cancel,
    Clusters,
    Command,
    Help,
    Ignition,
    List,
    Loans,
    Migrate,
    MigrateAll,
    Retry,
    Status,
)
from bot.texts import arrivals as arrival_texts
from bot.texts import loans as loan_texts
from bot.texts import usage as usage_texts
from joinops.requests.model import Role

ROLE_SPELLINGS: Mapping[str, Role] = {
    "worker": Role.WORKER,
    "control-plane": Role.CONTROL_PLANE,
    "controlplane": Role.CONTROL_PLANE,
    "cp": Role.CONTROL_PLANE,
}
_ROLE_HINTS = {"master": "control-plane", "workers": "worker", "node": "worker"}

REQUEST_ID = re.compile(r"req-[0-9a-f]{8}")
_NODE_CHARACTERS = frozenset(string.ascii_lowercase + string.digits + "-.")
_KEYWORDS = ("from", "to", "as")
FORCE = "force"
_NEAR = 0.7  # difflib ratio from which a word counts as a misspelling of another


class GrammarError(ValueError):
    """Text that is not a command: `message` says why, `usage` is the form to type instead."""

    def __init__(self, message: str, usage: str) -> None:
        super().__init__(message, usage)
        self.message = message
        self.usage = usage

    @property
    def reply(self) -> str:
        """What to show the user."""
        return usage_texts.error_reply(self.message, self.usage)

    def __str__(self) -> str:
        return self.reply


# ---- parsing -----------------------------------------------------------------------------------

_USAGES = {
    "help": usage_texts.USAGE_HELP,
    "clusters": usage_texts.USAGE_CLUSTERS,
    "list": usage_texts.USAGE_LIST,
    "status": usage_texts.USAGE_STATUS,
    "cancel": usage_texts.USAGE_CANCEL,
    "retry": usage_texts.USAGE_RETRY,
    "ignition": usage_texts.USAGE_IGNITION,
    "all": usage_texts.USAGE_MIGRATE_ALL,
    "loans": loan_texts.USAGE_LOANS,
    "arrivals": arrival_texts.USAGE_ARRIVALS,
}

_QUESTIONS: Mapping[str, Callable[[], Command]] = {
    "clusters": Clusters,
    "list": List,
    "loans": Loans,
    "arrivals": Arrivals,
}


def parse(text: str, known_clusters: Sequence[str]) -> Command:
    """The command `text` (a slash command's text) asks for; raises GrammarError."""
    words = text.split()
    if not words:
        return Help()
    head, rest = words[0].lower(), words[1:]
    clusters = _Clusters(known_clusters)
    if head == "help":
        return Help()
    if head in _QUESTIONS:
        if rest:
            raise GrammarError(usage_texts.takes_no_arguments(head, rest), _USAGES[head])
        return _QUESTIONS[head]()
    if head == "status":
        cursor = _Words(rest, _USAGES[head])
        request_id = None if cursor.done() else _request_id(cursor, head)
        cursor.end()
        return Status(request_id)
    if head in ("cancel", "retry"):
        cursor = _Words(rest, _USAGES[head])
        request_id = _request_id(cursor, head)
        cursor.end()
        return Cancel(request_id) if head == "cancel" else Retry(request_id)
    if head == "ignition":
        return _ignition(_Words(rest, _USAGES[head]), clusters)
    words, force = _closing_force(words)
    words, loan = _closing_loan(words, head)
    if not force:
        words, force = _closing_force(words)
    if head == "all":
        command = _migrate_all(_Words(words[1:], _USAGES[head]), clusters)
        return replace(command, force=force, loan=loan)
    return replace(_migrate(words, clusters), force=force, loan=loan)


def _closing_loan(words: list[str], head: str) -> tuple[list[str], str]:
    """The words without a closing `for DURATION`, and the duration as typed ("" if none)."""
    if len(words) > 2 and words[-1].lower() == "for":
        raise GrammarError(usage_texts.missing_value("for", "DURATION"), loan_texts.USAGE_LOAN)
    if len(words) > 3 and words[-2].lower() == "for" and words[-3].lower() not in _KEYWORDS:
        return words[:-2], words[-1]
    return words, ""


def _closing_force(words: list[str]) -> tuple[list[str], bool]:
    """The words without a closing `force` keyword, and whether it was there."""
    closing = len(words) > 2 and words[-1].lower() == FORCE
    if closing and words[-2].lower() not in _KEYWORDS:
        return words[:-1], True
    return words, False


def node_name_problem(name: str) -> str | None:
    """Why `name` cannot be a Kubernetes node name (a DNS-1123 subdomain), or None if it can."""
    if len(name) > usage_texts.NODE_NAME_MAX:
        return usage_texts.node_too_long(name)
    if any(c in string.ascii_uppercase for c in name):
        return usage_texts.node_uppercase(name)
    bad = next((c for c in name if c not in _NODE_CHARACTERS), None)
    if bad is not None:
        return usage_texts.node_bad_character(name, bad)
    for label in name.split("."):
        if not label:
            return usage_texts.node_empty_label(name)
        if len(label) > usage_texts.NODE_LABEL_MAX:
            return usage_texts.node_label_too_long(name, label)
        if label.startswith("-") or label.endswith("-"):
            return usage_texts.node_label_edge(name, label)
    return None


def _migrate(words: Sequence[str], clusters: _Clusters) -> Migrate:
    has_from = any(w.lower() == "from" for w in words)
    cursor = _Words(
        words, usage_texts.USAGE_MIGRATE if has_from else usage_texts.USAGE_MIGRATE_MANY
    )
    nodes: list[str] = []
    while not cursor.done() and cursor.peek().lower() not in _KEYWORDS:
        nodes.append(cursor.take())
    if not nodes:
        cursor.fail(usage_texts.missing_nodes())
    if cursor.done():  # no `to` anywhere: a misspelt command or keyword, or a forgotten target
        command = _near(nodes[0], tuple(_USAGES))
        if command is not None:
            raise GrammarError(usage_texts.did_you_mean(nodes[0], command), _USAGES[command])
    _keyword_typos(nodes, clusters, cursor)
    if cursor.done():
        if len(nodes) > 1 and clusters.knows(nodes[-1]):
            cursor.fail(usage_texts.missing_to_before(nodes[-1]))
        cursor.fail(usage_texts.missing_target())
    source = None
    if cursor.next_is("from"):
        cursor.take()
        source = cursor.value("from", "SOURCE")
    cursor.keyword("to", usage_texts.missing_target())
    target = cursor.value("to", "TARGET")
    role = cursor.role()
    for i, node in enumerate(nodes):
        problem = node_name_problem(node)
        if problem is not None:
            cursor.fail(problem)
        if node in nodes[:i]:
            cursor.fail(usage_texts.node_repeated(node))
    resolved_source = clusters.resolve(source, cursor) if source is not None else None
    resolved_target = clusters.resolve(target, cursor)
    if resolved_source == resolved_target:
        cursor.fail(usage_texts.same_cluster(resolved_target))
    return Migrate(tuple(nodes), resolved_source, resolved_target, role)


def _keyword_typos(nodes: Sequence[str], clusters: _Clusters, cursor: _Words) -> None:
    """Refuse a misspelt `from`/`to` standing among the nodes (see the module's decisions)."""
    no_keyword = cursor.done()
    for i, word in enumerate(nodes):
        meant = _near(word, ("from", "to"))
        following = nodes[i + 1] if i + 1 < len(nodes) else None
        if meant is None:
            continue
        if (no_keyword and i > 0) or (following is not None and clusters.knows(following)):
            usage = usage_texts.USAGE_MIGRATE if meant == "from" else cursor.usage
            raise GrammarError(usage_texts.did_you_mean(word, meant), usage)


def _migrate_all(cursor: _Words, clusters: _Clusters) -> MigrateAll:
    if cursor.done() or cursor.next_is("to"):
        cursor.fail(usage_texts.all_needs_source())
    cursor.keyword("from", usage_texts.all_needs_source())
    source = cursor.value("from", "SOURCE")
    cursor.keyword("to", usage_texts.missing_target())
    target = cursor.value("to", "TARGET")
    if cursor.next_is("as"):
        cursor.fail(usage_texts.all_takes_no_role())
    cursor.end()
    resolved_source = clusters.resolve(source, cursor)
    resolved_target = clusters.resolve(target, cursor)
    if resolved_source == resolved_target:
        cursor.fail(usage_texts.same_cluster(resolved_target))
    return MigrateAll(resolved_source, resolved_target)


def _ignition(cursor: _Words, clusters: _Clusters) -> Ignition:
    cluster = cursor.value("ignition", "CLUSTER")
    role = cursor.role()
    return Ignition(clusters.resolve(cluster, cursor), role)


def _request_id(cursor: _Words, command: str) -> str:
    if cursor.done():
        cursor.fail(usage_texts.missing_request_id(command))
    word = cursor.take()
    if not REQUEST_ID.fullmatch(word.lower()):
        cursor.fail(usage_texts.bad_request_id(word))
    return word.lower()


def _near(word: str, candidates: Sequence[str]) -> str | None:
    """The candidate `word` looks like a misspelling of, if any."""
    close = difflib.get_close_matches(word.lower(), candidates, n=1, cutoff=_NEAR)
    return close[0] if close else None


class _Words:
    """The words of one command, read left to right; failures carry the form's usage."""

    def __init__(self, words: Sequence[str], usage: str) -> None:
        self._words = list(words)
        self._at = 0
        self.usage = usage

    def fail(self, message: str) -> NoReturn:
        raise GrammarError(message, self.usage)

    def done(self) -> bool:
        return self._at >= len(self._words)

    def peek(self) -> str:
        return self._words[self._at]

    def take(self) -> str:
        word = self._words[self._at]
        self._at += 1
        return word

    def next_is(self, keyword: str) -> bool:
        return not self.done() and self.peek().lower() == keyword

    def keyword(self, keyword: str, missing: str) -> None:
        """Read `keyword`; fail with `missing` if the words ran out."""
        if self.done():
            self.fail(missing)
        word = self.take()
        if word.lower() != keyword:
            wrong = _near(word, (keyword,))
            self.fail(
                usage_texts.did_you_mean(word, keyword)
                if wrong
                else usage_texts.expected_word(word, keyword)
            )

    def value(self, after: str, placeholder: str) -> str:
        """Read the word filling `placeholder` after the keyword `after`."""
        if self.done() or self.peek().lower() in _KEYWORDS:
            self.fail(usage_texts.missing_value(after, placeholder))
        return self.take()

    def role(self) -> Role:
        """Read an optional closing `as ROLE`; worker when absent."""
        if self.done():
            return Role.WORKER
        if not self.next_is("as"):
            word = self.peek()
            if _near(word, ("as",)):
                self.fail(usage_texts.did_you_mean(word, "as"))
            self.end()
        self.take()
        spelled = self.value("as", "ROLE")
        role = ROLE_SPELLINGS.get(spelled.lower())
        if role is None:
            hint = _ROLE_HINTS.get(spelled.lower()) or _near(spelled, tuple(ROLE_SPELLINGS))
            self.fail(usage_texts.unknown_role(spelled, hint))
        self.end()
        return role

    def end(self) -> None:
        """Fail if any words are left."""
        if not self.done():
            self.fail(usage_texts.unexpected_words(self._words[self._at :]))


class _Clusters:
    """The configured cluster names, matched in any case."""

    def __init__(self, known: Sequence[str]) -> None:
        self.known = tuple(known)
        self._by_lower = {name.lower(): name for name in self.known}

    def knows(self, word: str) -> bool:
        return word.lower() in self._by_lower

    def resolve(self, word: str, cursor: _Words) -> str:
        """The configured spelling of `word`, or a failure naming the known clusters."""
        name = self._by_lower.get(word.lower())
        if name is not None:
            return name
        if not self.known:
            cursor.fail(usage_texts.no_clusters(word))
        close = _near(word, tuple(self._by_lower))
        suggestion = self._by_lower[close] if close else None
        cursor.fail(usage_texts.unknown_cluster(word, self.known, suggestion))
