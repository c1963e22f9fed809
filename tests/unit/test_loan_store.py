"""Loans in the domain: `for DURATION`, the reminder's lead, and the store's compare-and-sets
under racing callers (real Redis)."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from joinops.errors import UsageError
from joinops.loans.duration import parse_loan
from joinops.loans.model import Loan, LoanState, reminder_lead
from joinops.loans.store import LoanStore
from joinops.loans.texts import spell
from joinops.settings import Policy

POLICY = Policy(min_loan=timedelta(seconds=1), max_loan=timedelta(days=30))


@pytest.mark.parametrize(
    ("word", "seconds"),
    [("90s", 90), ("45m", 2700), ("8h", 28800), ("2d", 172800), ("1d12h", 129600), ("8H", 28800)],
)
def test_loan_durations_take_s_m_h_d(word, seconds):
    assert parse_loan(word, POLICY) == timedelta(seconds=seconds)


@pytest.mark.parametrize("word", ["8", "8x", "h", "-1h", "1w", "", "0s"])
def test_what_is_not_a_duration_names_the_units_and_the_range(word):
    with pytest.raises(UsageError) as e:
        parse_loan(word, POLICY)
    assert "give a number and a unit s, m, h or d" in str(e.value)
    assert "a loan lasts from 1 s to 30 days" in str(e.value)


def test_the_default_range_is_10_minutes_to_30_days():
    with pytest.raises(
        UsageError, match="A loan of 9 min is not allowed: a loan lasts from 10 min"
    ):
        parse_loan("9m", Policy())
    with pytest.raises(UsageError, match="A loan of 31 days is not allowed"):
        parse_loan("31d", Policy())
    assert parse_loan("30d", Policy()) == timedelta(days=30)


def test_the_reminder_comes_30_minutes_before_or_a_quarter_of_the_loan():
    assert reminder_lead(timedelta(hours=8)) == timedelta(minutes=30)
    assert reminder_lead(timedelta(hours=1)) == timedelta(minutes=15)
    assert reminder_lead(timedelta(seconds=4)) == timedelta(seconds=1)
    assert spell(timedelta(hours=1, minutes=30)) == "1 h 30 min"


def _active(store: LoanStore, loan_id: str = "req-0000aaaa", seconds: float = 60) -> Loan:
    store.propose(Loan(id=loan_id, node="n-1", home="a", borrower="b", seconds=seconds))
    opened = store.activate(loan_id, "UAPPROVER1", "C1", "1.0")
    assert opened is not None
    return opened


def _race(count: int, call):  # type: ignore[no-untyped-def]
    results: list[object] = []
    start = threading.Barrier(count)

    def one(i: int) -> None:
        start.wait()
        results.append(call(i))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_of_many_racing_claims_on_a_due_return_exactly_one_wins(redis_client):
    clock = [1000.0]
    store = LoanStore(redis_client, clock=lambda: clock[0])
    loan = _active(store, seconds=60)
    clock[0] += 30
    assert store.claim_return(loan.id, loan.generation, "req-notdue0") is None  # not due yet
    clock[0] += 30
    won = _race(8, lambda i: store.claim_return(loan.id, loan.generation, f"req-0000000{i}"))
    winners = [w for w in won if w is not None]
    assert len(winners) == 1
    after = store.get(loan.id)
    assert after is not None and after.state is LoanState.RETURNING
    assert after.return_request == winners[0].return_request  # type: ignore[attr-defined]


def test_a_due_return_that_ended_overdue_is_not_claimed_again_by_a_late_sweep(redis_client):
    """The Return button's job and the sweep both start the return of one due time: when the
    job's return was refused (overdue), the sweep that read the loan before must not try it a
    second time (the thread said "overdue" twice) — only a new Return now does."""
    clock = [1000.0]
    store = LoanStore(redis_client, clock=lambda: clock[0])
    loan = _active(store, seconds=60)
    asked = store.ask_return(loan.id)
    assert asked is not None
    claimed = store.claim_return(loan.id, asked.generation, "req-00000001")
    assert claimed is not None
    assert store.end_return(loan.id, "req-00000001", LoanState.OVERDUE, "refused") is not None
    assert store.claim_return(loan.id, asked.generation, "req-00000002") is None  # the late sweep
    again = store.ask_return(loan.id)  # Return now, pressed again
    assert again is not None
    assert store.claim_return(loan.id, again.generation, "req-00000003") is not None


def test_an_extension_makes_the_older_generation_stale_and_stops_at_max_loan(redis_client):
    clock = [1000.0]
    store = LoanStore(redis_client, clock=lambda: clock[0])
    loan = _active(store, seconds=3600)
    extended, why = store.extend(loan.id, timedelta(hours=4), timedelta(hours=6))
    assert extended is not None and why == "" and extended.due_at == 1000 + 5 * 3600
    clock[0] = extended.due_at
    assert store.claim_return(loan.id, loan.generation, "req-00000001") is None  # stale job
    again, why = store.extend(loan.id, timedelta(hours=4), timedelta(hours=6))
    assert again is None and why == "too-long"
    stale, why = store.extend(loan.id, timedelta(hours=1), timedelta(hours=6), loan.generation)
    assert stale is None and why == "changed"


def test_a_reminder_is_claimed_once_per_generation(redis_client):
    store = LoanStore(redis_client)
    loan = _active(store)
    won = _race(6, lambda i: store.claim_reminder(loan.id, loan.generation))
    assert sum(w is not None for w in won) == 1


def test_a_loan_range_that_cannot_hold_a_loan_is_a_configuration_error():
    with pytest.raises(ValueError, match="max_loan must not be shorter than min_loan"):
        Policy(min_loan=timedelta(hours=2), max_loan=timedelta(hours=1))
    with pytest.raises(ValueError, match="min_loan must be longer than 0 s"):
        Policy(min_loan=timedelta(0))
