"""Loans in Redis: one hash each (`joinops:loan:<id>`), the open ones in a set.

Every change is a compare-and-set under WATCH (`_change`): of any number of racing callers — two
workers, a sweep and a scheduled job, two clicks — exactly one changes a loan from a given
state. `lease` is a short claim on the work of a loan (making its return request), so that a
process killed in the middle leaves it to another one after the lease, never to two at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta

import redis

from joinops.loans.model import LISTED, OPEN, Loan, LoanState

PREFIX = "joinops:loan:"
OPEN_SET = "joinops:loans:open"
LEASE = "joinops:loan-lease:"

Change = Callable[[Loan], dict[str, object] | None]  # the fields to set, or None: no change


class LoanStore:
    def __init__(self, redis_client: redis.Redis, clock: Callable[[], float] = time.time) -> None:
        self.redis = redis_client
        self.clock = clock

    # ---- reading ---------------------------------------------------------------------------

    def get(self, loan_id: str) -> Loan | None:
        raw = self.redis.hgetall(PREFIX + loan_id)
        if not raw or b"id" not in raw:
            return None
        return Loan.from_hash({_s(k): _s(v) for k, v in raw.items()})

    def open_loans(self) -> list[Loan]:
        ids = sorted(_s(i) for i in self.redis.smembers(OPEN_SET))
        found = [loan for loan in (self.get(i) for i in ids) if loan is not None]
        return sorted(found, key=lambda loan: (loan.due_at or float("inf"), loan.id))

    def listed(self) -> list[Loan]:
        """Active and overdue loans (and those being returned), soonest due first."""
        return [loan for loan in self.open_loans() if loan.state in LISTED]

    # ---- changing --------------------------------------------------------------------------

    def propose(self, loan: Loan) -> Loan:
        """Store a loan waiting for its lending move (state `lending`)."""
        with self.redis.pipeline() as pipe:
            pipe.hset(PREFIX + loan.id, mapping=loan.to_hash())  # type: ignore[arg-type]
            pipe.sadd(OPEN_SET, loan.id)
            pipe.execute()
        return loan

    def activate(self, loan_id: str, approver: str, channel: str, thread_ts: str) -> Loan | None:
        """The lending move succeeded: the loan runs from now. None if it was not `lending`."""
        now = self.clock()

        def change(loan: Loan) -> dict[str, object] | None:
            if loan.state is not LoanState.LENDING:
                return None
            return {
                "state": LoanState.ACTIVE,
                "lent_at": now,
                "due_at": now + loan.seconds,
                "generation": loan.generation + 1,
                "approver": approver,
                "channel": channel,
                "thread_ts": thread_ts,
            }

        return self._change(loan_id, change)

    def claim_reminder(self, loan_id: str, generation: int) -> Loan | None:
        def change(loan: Loan) -> dict[str, object] | None:
            due = loan.state is LoanState.ACTIVE and loan.generation == generation
            return {"reminded": generation} if due and loan.reminded != generation else None

        return self._change(loan_id, change)

    def extend(
        self, loan_id: str, by: timedelta, longest: timedelta, generation: int | None = None
    ) -> tuple[Loan | None, str]:
        """Push an active loan's return back by `by`: (the loan, "") or (None, why not)."""
        why = ""

        def change(loan: Loan) -> dict[str, object] | None:
            nonlocal why
            if loan.state is not LoanState.ACTIVE:
                why = "state"
                return None
            if generation is not None and generation != loan.generation:
                why = "changed"  # pressed on a message shown before the last change
                return None
            due = loan.due_at + by.total_seconds()
            if due - loan.lent_at > longest.total_seconds():
                why = "too-long"
                return None
            return {"due_at": due, "generation": loan.generation + 1}

        return self._change(loan_id, change), why

    def ask_return(self, loan_id: str, generation: int | None = None) -> Loan | None:
        """Return now: an active or overdue loan is due at once (a new generation)."""
        now = self.clock()

        def change(loan: Loan) -> dict[str, object] | None:
            if loan.state not in (LoanState.ACTIVE, LoanState.OVERDUE):
                return None
            if generation is not None and generation != loan.generation:
                return None
            return {"due_at": now, "generation": loan.generation + 1}

        return self._change(loan_id, change)

    def claim_return(self, loan_id: str, generation: int, request_id: str) -> Loan | None:
        """Due and not claimed yet: the return's request id is fixed now, once."""
        now = self.clock()

        def change(loan: Loan) -> dict[str, object] | None:
            if loan.state not in (LoanState.ACTIVE, LoanState.OVERDUE):
                return None
            if loan.generation != generation or now < loan.due_at:
                return None
            if loan.return_generation == generation:
                return None  # this due time's return was tried (a late sweep): Return now is anew
            return {
                "state": LoanState.RETURNING,
                "return_request": request_id,
                "return_generation": generation,
                "reason": "",
            }

        return self._change(loan_id, change)

    def end_return(self, loan_id: str, request_id: str, to: LoanState, reason: str) -> Loan | None:
        """The return `request_id` ended (or was not attempted): the loan moves to `to`."""

        def change(loan: Loan) -> dict[str, object] | None:
            if loan.state is not LoanState.RETURNING or loan.return_request != request_id:
                return None
            return {"state": to, "reason": reason}

        return self._change(loan_id, change)

    def not_lent(self, loan_id: str, reason: str) -> Loan | None:
        def change(loan: Loan) -> dict[str, object] | None:
            if loan.state is not LoanState.LENDING:
                return None
            return {"state": LoanState.NOT_LENT, "reason": reason}

        return self._change(loan_id, change)

    def note(self, loan_id: str, **fields: object) -> None:
        """Fields that are not its state (the reminder message's ts)."""
        self.redis.hset(PREFIX + loan_id, mapping={k: str(v) for k, v in fields.items()})

    def lease(self, loan_id: str, seconds: float) -> bool:
        """Claim the work on a loan for `seconds`; False while another process holds it."""
        return bool(self.redis.set(LEASE + loan_id, "1", nx=True, px=max(int(seconds * 1000), 1)))

    def release(self, loan_id: str) -> None:
        self.redis.delete(LEASE + loan_id)

    def _change(self, loan_id: str, change: Change) -> Loan | None:
        """Apply `change` atomically; the loan after it, or None when nothing changed."""
        key = PREFIX + loan_id
        with self.redis.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(key)
                    raw: dict[bytes, bytes] = pipe.hgetall(key)  # type: ignore[assignment]
                    if not raw or b"id" not in raw:
                        return None
                    loan = Loan.from_hash({_s(k): _s(v) for k, v in raw.items()})
                    fields = change(loan)
                    if fields is None:
                        return None
                    pipe.multi()
                    pipe.hset(key, mapping={k: str(v) for k, v in fields.items()})
                    state = fields.get("state", loan.state)
                    if state not in OPEN:
                        pipe.srem(OPEN_SET, loan_id)
                    pipe.execute()
                except redis.WatchError:
                    continue
                for name, value in fields.items():
                    setattr(loan, name, value)
                return loan


def _s(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
