"""The conformance matrix: shape x container x direction, filled from actual test outcomes."""

from __future__ import annotations

from collections import defaultdict
from typing import Final

__all__ = ["CONTAINERS", "DIRECTIONS", "NOT_APPLICABLE", "ROWS", "record", "render"]

ROWS: Final = (
    "flat",
    "2-level",
    "3-level",
    "padded `__TACOPAD__`",
    "level1+ offsets misplaced",
    "ZIP64 (>65,535 members)",
    "no `internal:current_id`",
    "binary `__TACOCAT__`",
)
CONTAINERS: Final = ("ZIP", "FOLDER", "TACOCAT")
DIRECTIONS: Final = ("ref→tg", "tg→ref")

NOT_APPLICABLE: Final = {
    ("ZIP64 (>65,535 members)", "FOLDER"): "a folder has no ZIP directory",
    ("ZIP64 (>65,535 members)", "TACOCAT"): "parts are plain ZIPs, see the ZIP column",
    ("level1+ offsets misplaced", "FOLDER"): "FOLDER stores no offsets",
    ("no `internal:current_id`", "tg→ref"): "taco_gdal always writes current_id",
    ("binary `__TACOCAT__`", "ZIP"): "TACOCAT only",
    ("binary `__TACOCAT__`", "FOLDER"): "TACOCAT only",
    ("binary `__TACOCAT__`", "tg→ref"): (
        "tacoreader 2.4.21 reads only `.tacocat/`; 2.0.0c12: `make_golden.py --crosscheck`"
    ),
}
"""(row, container) or (row, direction) -> why that cell does not exist."""

Cell = tuple[str, str, str, str]
_results: dict[tuple[str, str, str], list[tuple[str, str, str]]] = defaultdict(list)


def record(cell: Cell, nodeid: str, outcome: str) -> None:
    """Note the ``outcome`` of test ``nodeid``, which covers ``cell``.

    ``cell`` is (row, container, direction, source).
    """
    row, container, direction, source = cell
    _results[(row, container, direction)].append((source, nodeid, outcome))


def _reason(row: str, container: str, direction: str) -> str | None:
    return NOT_APPLICABLE.get((row, container)) or NOT_APPLICABLE.get((row, direction))


def _cell_text(row: str, container: str, direction: str) -> str:
    reason = _reason(row, container, direction)
    results = _results.get((row, container, direction), [])
    if not results:
        return f"n/a ({reason})" if reason else "not run"
    failed = [r for r in results if r[2] != "passed"]
    sources = sorted({source for source, _, _ in results})
    if failed:
        failing = ", ".join(sorted({s for s, _, _ in failed}))
        return f"**FAIL** {len(failed)}/{len(results)} ({failing})"
    return f"pass ({', '.join(sources)})"


def render() -> str:
    """The matrix as a Markdown table, one column per container x direction."""
    header = ["shape"] + [f"{c} {d}" for c in CONTAINERS for d in DIRECTIONS]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in ROWS:
        cells = [_cell_text(row, c, d) for c in CONTAINERS for d in DIRECTIONS]
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    total = sum(len(v) for v in _results.values())
    failed = sum(1 for v in _results.values() for r in v if r[2] != "passed")
    lines.append("")
    lines.append(
        f"{total} cell checks from the test run, {failed} failed. "
        "ref→tg: written by the reference tools, read by taco_gdal; "
        "tg→ref: written by taco_gdal, read by tacoreader 2.4.21. "
        "live = written during the run by tacotoolbox 0.26.9; golden X = committed file "
        "written by tacotoolbox X."
    )
    return "\n".join(lines) + "\n"
