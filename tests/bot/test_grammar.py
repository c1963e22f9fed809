"""The /join grammar: every form, every refusal as the user reads it, and fuzzing."""

import ast
import inspect

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot import grammar
from bot.grammar import GrammarError, node_name_problem, parse
from bot.parsed import (
    Cancel,
    Clusters,
    Command,
    Help,
    Ignition,
    List,
    Migrate,
    MigrateAll,
    Retry,
    Status,
)
from bot.texts import common as common_texts
from bot.texts import usage as usage_texts
from joinops.requests.ids import is_request_id
from joinops.requests.model import Role

KNOWN = ("prod", "staging", "Lab-East")
W, CP = Role.WORKER, Role.CONTROL_PLANE


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("node-1 from prod to staging", Migrate(("node-1",), "prod", "staging", W)),
        ("node-1 from prod to staging as worker", Migrate(("node-1",), "prod", "staging", W)),
        (
            "node-1 from prod to staging as control-plane",
            Migrate(("node-1",), "prod", "staging", CP),
        ),
        (
            "node-1 from prod to staging as controlplane",
            Migrate(("node-1",), "prod", "staging", CP),
        ),
        ("node-1 from prod to staging as CP", Migrate(("node-1",), "prod", "staging", CP)),
        ("n1 n2.example.com to staging", Migrate(("n1", "n2.example.com"), None, "staging", W)),
        ("n1 n2 n3 to staging as cp", Migrate(("n1", "n2", "n3"), None, "staging", CP)),
        ("n1 n2 from prod to staging", Migrate(("n1", "n2"), "prod", "staging", W)),
        ("node-1 to lab-east", Migrate(("node-1",), None, "Lab-East", W)),
        (
            "  node-1\tFROM  PROD\n To Staging  AS Worker ",
            Migrate(("node-1",), "prod", "staging", W),
        ),
        ("node-1\u00a0to\u00a0staging", Migrate(("node-1",), None, "staging", W)),
        ("n1 list to staging", Migrate(("n1", "list"), None, "staging", W)),
        ("all from prod to staging", MigrateAll("prod", "staging")),
        ("node-1 from prod to staging force", Migrate(("node-1",), "prod", "staging", W, True)),
        ("n1 n2 to staging as cp Force", Migrate(("n1", "n2"), None, "staging", CP, True)),
        ("all from prod to staging FORCE", MigrateAll("prod", "staging", True)),
        ("ALL From Prod To Staging", MigrateAll("prod", "staging")),
        ("ignition prod", Ignition("prod", W)),
        ("ignition prod as control-plane", Ignition("prod", CP)),
        ("Ignition LAB-EAST as worker", Ignition("Lab-East", W)),
        ("", Help()),
        ("   ", Help()),
        ("help", Help()),
        ("HELP me please", Help()),
        ("clusters", Clusters()),
        ("list", List()),
        ("status", Status(None)),
        ("status req-3f9a1c2b", Status("req-3f9a1c2b")),
        ("Status REQ-3F9A1C2B", Status("req-3f9a1c2b")),
        ("cancel req-3f9a1c2b", Cancel("req-3f9a1c2b")),
        ("retry req-00000000", Retry("req-00000000")),
    ],
)
def test_every_form_parses(text: str, expected: Command) -> None:
    assert parse(text, KNOWN) == expected


def test_force_is_a_keyword_only_as_the_closing_word_after_a_value() -> None:
    known = (*KNOWN, "force")
    assert parse("node-1 to force", known) == Migrate(("node-1",), None, "force", W)
    assert parse("node-1 to force force", known) == Migrate(("node-1",), None, "force", W, True)
    both = Migrate(("node-1", "force"), None, "staging", W)  # elsewhere it is a node name
    assert parse("node-1 force to staging", KNOWN) == both


def test_commands_are_frozen() -> None:
    command = parse("node-1 to staging", KNOWN)
    with pytest.raises(AttributeError):
        command.target = "prod"  # type: ignore[misc, union-attr]


def test_role_is_a_str_enum_with_kubernetes_spellings() -> None:
    assert [r.value for r in Role] == ["worker", "control-plane"]
    assert Role("control-plane") is CP and f"{CP}" == "control-plane"


MIGRATE, MANY = usage_texts.USAGE_MIGRATE, usage_texts.USAGE_MIGRATE_MANY


@pytest.mark.parametrize(
    ("text", "reason", "usage"),
    [
        # misspelt keywords and commands
        ("node-1 form prod to staging", "Did you mean `from`?", MIGRATE),
        ("node-1 from prod too staging", "Did you mean `to`?", MIGRATE),
        ("n1 n2 too staging", "Did you mean `to`?", MANY),
        ("node-1 to staging ass cp", "Did you mean `as`?", MANY),
        ("stauts req-3f9a1c2b", "Did you mean `status`?", usage_texts.USAGE_STATUS),
        ("cancle req-3f9a1c2b", "Did you mean `cancel`?", usage_texts.USAGE_CANCEL),
        ("retyr req-3f9a1c2b", "Did you mean `retry`?", usage_texts.USAGE_RETRY),
        ("clsuters", "Did you mean `clusters`?", usage_texts.USAGE_CLUSTERS),
        ("ignitoin prod", "Did you mean `ignition`?", usage_texts.USAGE_IGNITION),
        ("all form prod to staging", "Did you mean `from`?", usage_texts.USAGE_MIGRATE_ALL),
        # structure
        ("to staging", "Which node?", MANY),
        ("node-1", "Add `to TARGET`", MANY),
        ("node-1 staging", "Did you mean `to staging`?", MANY),
        ("node-1 from prod", "Add `to TARGET`", MIGRATE),
        ("node-1 from to staging", "Missing SOURCE after `from`", MIGRATE),
        ("node-1 to", "Missing TARGET after `to`", MANY),
        ("node-1 to as cp", "Missing TARGET after `to`", MANY),
        ("node-1 to staging as", "Missing ROLE after `as`", MANY),
        ("node-1 as cp to staging", "Expected `to` here, not `as`", MANY),
        ("node-1 from prod staging", "Expected `to` here, not `staging`", MIGRATE),
        ("node-1 to staging now", "`now` at the end", MANY),
        ("node-1 to staging as cp now", "`now` at the end", MANY),
        ("list everything", "`list` takes nothing after it", usage_texts.USAGE_LIST),
        ("clusters all", "`clusters` takes nothing after it", usage_texts.USAGE_CLUSTERS),
        ("all to staging", "`all` needs the cluster to empty", usage_texts.USAGE_MIGRATE_ALL),
        ("all", "`all` needs the cluster to empty", usage_texts.USAGE_MIGRATE_ALL),
        ("all from prod to staging as cp", "leave out `as ROLE`", usage_texts.USAGE_MIGRATE_ALL),
        ("all from prod", "Add `to TARGET`", usage_texts.USAGE_MIGRATE_ALL),
        ("ignition", "Missing CLUSTER after `ignition`", usage_texts.USAGE_IGNITION),
        ("ignition prod staging", "`staging` at the end", usage_texts.USAGE_IGNITION),
        # node names (DNS-1123 subdomains)
        ("Node-1 to staging", "has capital letters", MANY),
        ("node_1 to staging", "contains `_`", MANY),
        ("nöde to staging", "contains `ö`", MANY),
        ("node..1 to staging", "two dots in a row", MANY),
        (".node to staging", "starts or ends with a dot", MANY),
        ("-node to staging", "must start and end with a letter or digit", MANY),
        ("node.a- to staging", "Part `a-` of node name", MANY),
        (f"{'a' * 64}.b to staging", "64 characters long; each dot-separated part", MANY),
        (f"{'a.' * 127}a to staging", "is 255 characters long; the limit is 253", MANY),
        ("n1 n2 n1 to staging", "Node `n1` is listed more than once", MANY),
        # clusters
        ("node-1 to prdo", "I don't know a cluster called `prdo`. Did you mean `prod`?", MANY),
        ("node-1 to mars", "Known clusters: `prod`, `staging`, `Lab-East`.", MANY),
        ("node-1 from mars to prod", "cluster called `mars`", MIGRATE),
        ("ignition mars", "cluster called `mars`", usage_texts.USAGE_IGNITION),
        ("node-1 from prod to PROD", "`prod` is both the source and the target", MIGRATE),
        (
            "all from staging to staging",
            "both the source and the target",
            usage_texts.USAGE_MIGRATE_ALL,
        ),
        # roles
        (
            "node-1 to staging as boss",
            "`boss` is not a role. Roles: `worker` or `control-plane`",
            MANY,
        ),
        ("node-1 to staging as master", "Did you mean `control-plane`?", MANY),
        ("node-1 to staging as wroker", "Did you mean `worker`?", MANY),
        ("ignition prod as admin", "`admin` is not a role", usage_texts.USAGE_IGNITION),
        # request ids
        ("cancel", "`cancel` needs a request id, like `req-3f9a1c2b`", usage_texts.USAGE_CANCEL),
        ("retry", "`retry` needs a request id", usage_texts.USAGE_RETRY),
        ("cancel 3f9a1c2b", "`3f9a1c2b` is not a request id", usage_texts.USAGE_CANCEL),
        ("retry req-3f9a1c2", "`req-3f9a1c2` is not a request id", usage_texts.USAGE_RETRY),
        ("status req-3f9a1c2g", "`req-3f9a1c2g` is not a request id", usage_texts.USAGE_STATUS),
        ("status req-3f9a1c2b now", "`now` at the end", usage_texts.USAGE_STATUS),
        ("cancel req-3f9a1c2b req-00000000", "`req-00000000` at the end", usage_texts.USAGE_CANCEL),
    ],
)
def test_every_refusal_says_why_and_what_to_type(text: str, reason: str, usage: str) -> None:
    with pytest.raises(GrammarError) as caught:
        parse(text, KNOWN)
    error = caught.value
    assert reason in error.message
    assert error.usage == usage
    shown = str(error)
    assert reason in shown and f"`{usage}`" in shown and usage_texts.USAGE_HELP in shown


def test_no_clusters_configured_is_said_plainly() -> None:
    with pytest.raises(GrammarError, match="no clusters are configured"):
        parse("node-1 to prod", [])


def test_a_cluster_named_like_a_node_can_still_be_moved_into() -> None:
    assert parse("edge from edge to prod", ("edge", "prod")) == Migrate(("edge",), "edge", "prod")


@pytest.mark.parametrize(
    "name",
    ["a", "0", "node-1", "node-1.example.com", "a" * 63, ".".join(["a" * 63] * 3) + ".abc"],
)
def test_valid_node_names(name: str) -> None:
    assert len(name) <= 253
    assert node_name_problem(name) is None


def test_user_words_cannot_break_the_formatting() -> None:
    with pytest.raises(GrammarError) as caught:
        parse("`evil`_node to staging", KNOWN)
    assert "``" not in caught.value.message
    with pytest.raises(GrammarError) as long:
        parse("x" * 5000 + " to staging", KNOWN)
    assert len(long.value.reply) < 500


def test_help_lists_every_form() -> None:
    help_text = usage_texts.help_text()
    for usage in (
        usage_texts.USAGE_MIGRATE,
        usage_texts.USAGE_MIGRATE_MANY,
        usage_texts.USAGE_MIGRATE_ALL,
        usage_texts.USAGE_IGNITION,
        usage_texts.USAGE_STATUS,
        usage_texts.USAGE_LIST,
        usage_texts.USAGE_CLUSTERS,
        usage_texts.USAGE_CANCEL,
        usage_texts.USAGE_RETRY,
        usage_texts.USAGE_HELP,
    ):
        [line] = [line for line in help_text.splitlines() if f"`{usage}`" in line]
        assert len(line) > len(usage) + 10  # has an explanation


def test_grammar_module_holds_no_prose() -> None:
    """User-facing words live in bot/texts.py; grammar.py only has keywords and placeholders."""
    tree = ast.parse(inspect.getsource(grammar))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    strings = [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        if id(node) not in docstrings
    ]
    assert strings and all(" " not in s for s in strings), [s for s in strings if " " in s]


# ---- fuzzing -------------------------------------------------------------------------------------

VOCABULARY = [
    *("from", "to", "as", "all", "ignition", "help", "clusters", "list", "status", "cancel"),
    *("retry", "form", "too", "ass", "stauts", "cancle", "FROM", "To", "cp", "master"),
    *("worker", "control-plane", "req-3f9a1c2b", "req-12", "prod", "PROD", "staging", "prdo"),
    *("Lab-East", "node-1", "Node-1", "n_1", "a..b", "-x", "x" * 64, "`", "é", ""),
]


def _accepts_or_refuses(text: str) -> None:
    try:
        command = parse(text, KNOWN)
    except GrammarError as error:
        assert error.message and error.usage.startswith(common_texts.COMMAND)
        assert error.usage in str(error)
    else:
        assert isinstance(
            command,
            Migrate | MigrateAll | Ignition | Help | Clusters | List | Status | Cancel | Retry,
        )
        _only_valid_names(command)


def _only_valid_names(command: Command) -> None:
    """Whatever parses carries only names the bot may use as they are: DNS-1123 node names,
    configured clusters, request ids — never other user text."""
    nodes = getattr(command, "nodes", ())
    assert all(node_name_problem(node) is None for node in nodes), nodes
    for cluster in (getattr(command, a, None) for a in ("source", "target", "cluster")):
        assert cluster is None or cluster in KNOWN, cluster
    request_id = getattr(command, "request_id", None)
    assert request_id is None or is_request_id(request_id), request_id


@settings(max_examples=200, database=None, deadline=None)
@given(st.text())
def test_any_text_parses_or_is_refused(text: str) -> None:
    _accepts_or_refuses(text)


@settings(max_examples=300, database=None, deadline=None)
@given(
    st.lists(st.sampled_from(VOCABULARY) | st.text(max_size=8), max_size=8),
    st.sampled_from([" ", "  ", "\t", "\n", "\u00a0"]),
)
def test_any_word_soup_parses_or_is_refused(words: list[str], sep: str) -> None:
    _accepts_or_refuses(sep.join(words))


NODE = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?(\.[a-z0-9]{1,5}){0,2}", fullmatch=True)


@settings(max_examples=100, database=None, deadline=None)
@given(
    st.lists(NODE, min_size=1, max_size=4, unique=True),
    st.sampled_from([None, *KNOWN]),
    st.sampled_from(KNOWN),
    st.sampled_from(sorted(grammar.ROLE_SPELLINGS)),
)
def test_well_formed_migrations_round_trip(
    nodes: list[str], source: str | None, target: str, role: str
) -> None:
    reserved = {"from", "to", "as", "all", "ignition", "help", "clusters", "list"}
    reserved |= {"status", "cancel", "retry", *(k.lower() for k in KNOWN)}
    if source == target or set(nodes) & reserved:
        return  # a node named like a keyword or a cluster is another test's business
    text = " ".join(nodes) + (f" from {source}" if source else "") + f" to {target} as {role}"
    command = parse(text, KNOWN)
    assert command == Migrate(tuple(nodes), source, target, grammar.ROLE_SPELLINGS[role])
