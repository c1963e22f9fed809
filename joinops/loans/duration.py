"""`for DURATION`: a loan's length in words (s, m, h, d) and the range the policy allows."""

from __future__ import annotations

from datetime import timedelta

from joinops.errors import UsageError
from joinops.loans import texts
from joinops.settings import Policy, parse_duration


def parse_loan(word: str, policy: Policy) -> timedelta:
    """The loan `word` asks for, within `policy.min_loan`..`max_loan`; raises UsageError."""
    shortest, longest = policy.min_loan, policy.max_loan
    try:
        asked = parse_duration(word) if isinstance(word, str) else None
    except ValueError:
        asked = None
    if asked is None or not asked:
        raise UsageError(texts.not_a_duration(word, shortest, longest))
    if not shortest <= asked <= longest:
        raise UsageError(texts.out_of_range(asked, shortest, longest))
    return asked
