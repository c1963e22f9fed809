"""The syntax of a systemd unit file or drop-in, as far as a host's systemd would refuse it:
section headers, `Key=Value` lines inside a section, comments, line continuations. Pure."""

from __future__ import annotations


def unit_text_problems(text: str) -> list[str]:
    """One line per problem, each starting "line N:" (empty: none)."""
    found: list[str] = []
    section = False
    continued = False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if continued:
            continued = stripped.endswith("\\")
            continue
        if not stripped or stripped[0] in "#;":
            continue
        if stripped.startswith("["):
            if not stripped.endswith("]") or len(stripped) < 3:
                found.append(f"line {number}: malformed section header {stripped!r}")
            section = True
            continue
        key, eq, _ = stripped.partition("=")
        if not eq or not key.strip():
            found.append(f"line {number}: expected Key=Value, got {stripped!r}")
        elif not section:
            found.append(f"line {number}: {key.strip()}= comes before any [Section]")
        continued = stripped.endswith("\\")
    return found
