"""`for DURATION` in the `/join` grammar: where it may stand, and what it is kept as."""

from __future__ import annotations

import pytest

from bot import grammar, parsed
from joinops.requests.model import Role

CLUSTERS = ["clusterA", "clusterB"]


@pytest.mark.parametrize(
    ("text", "loan", "force"),
    [
        ("node-7 from clusterA to clusterB for 8h", "8h", False),
        ("node-7 from clusterA to clusterB as cp for 2d", "2d", False),
        ("node-7 from clusterA to clusterB for 8h force", "8h", True),
        ("node-7 from clusterA to clusterB force for 8h", "8h", True),
        ("node-7 from clusterA to clusterB FOR 90s", "90s", False),
        ("node-7 from clusterA to clusterB", "", False),
    ],
)
def test_a_closing_for_duration_is_a_loan(text, loan, force):
    command = grammar.parse(text, CLUSTERS)
    assert isinstance(command, parsed.Migrate)
    assert (command.loan, command.force, command.target) == (loan, force, "clusterB")


def test_batches_and_whole_clusters_take_a_loan_too():
    many = grammar.parse("n-1 n-2 to clusterB as control-plane for 1d12h", CLUSTERS)
    assert isinstance(many, parsed.Migrate) and many.loan == "1d12h"
    assert many.role is Role.CONTROL_PLANE
    whole = grammar.parse("all from clusterA to clusterB for 3h", CLUSTERS)
    assert isinstance(whole, parsed.MigrateAll) and whole.loan == "3h"


def test_for_without_a_duration_says_what_is_missing():
    with pytest.raises(grammar.GrammarError) as e:
        grammar.parse("node-7 from clusterA to clusterB for", CLUSTERS)
    assert "DURATION" in e.value.reply and "for DURATION" in e.value.usage


def test_loans_lists_and_takes_nothing_more():
    assert isinstance(grammar.parse("loans", CLUSTERS), parsed.Loans)
    with pytest.raises(grammar.GrammarError):
        grammar.parse("loans all", CLUSTERS)
