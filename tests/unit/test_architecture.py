"""The layout keeps its shape: no module over 400 lines, and no import circle between modules.

The one-way contracts between packages are import-linter's (`lint-imports`, in `make lint`);
these two checks cover what a reader of the file list notices first.
"""

from __future__ import annotations

from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("joinops", "cli", "bot", "workers", "kubesim", "slacksim")
MAX_LINES = 400


def test_no_module_is_longer_than_400_lines() -> None:
    too_long = {
        str(path.relative_to(ROOT)): n
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert too_long == {}


def test_no_import_circle_between_modules() -> None:
    graph = grimp.build_graph(*PACKAGES)
    circles = [sorted(c) for c in _strongly_connected(graph) if len(c) > 1]
    assert circles == []


def _strongly_connected(graph: grimp.ImportGraph) -> list[set[str]]:
    """Tarjan's algorithm over module-to-module imports."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == module:
                    break
            found.append(component)

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found
