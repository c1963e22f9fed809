"""Which known names a mistyped one is close to, for a "did you mean" hint (difflib's ratio).

Compared without case (`clusterb` is `clusterB`). A hint is only given when it is close; a
single suggestion only when one name is closer than every other (`clusterC` is as close to
`clusterA` as to `clusterB`: suggesting either would be a guess).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

CUTOFF = 0.75  # difflib ratio from which a name counts as a misspelling of another


def close_names(word: str, known: Iterable[str], most: int = 3) -> list[str]:
    """The known names close to `word`, closest first, at most `most`."""
    scored = _scored(word, known)
    return [name for score, name in scored if score >= CUTOFF][:most]


def the_close_name(word: str, known: Iterable[str]) -> str | None:
    """The one known name `word` is a misspelling of: close, and closer than all others."""
    scored = _scored(word, known)
    if not scored or scored[0][0] < CUTOFF:
        return None
    if len(scored) > 1 and scored[1][0] == scored[0][0]:
        return None
    return scored[0][1]


def _scored(word: str, known: Iterable[str]) -> list[tuple[float, str]]:
    lowered = word.lower()
    scores = [
        (difflib.SequenceMatcher(None, lowered, name.lower()).ratio(), name)
        for name in dict.fromkeys(known)
        if name != word
    ]
    return sorted(scores, key=lambda pair: (-pair[0], pair[1]))
