"""Docstring examples stay runnable: a skipped example says why, on its own line.

The examples themselves run as doctests (collected by the root ``conftest.py``
on small real datasets); this test keeps ``+SKIP`` for what cannot run here.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = (ROOT / "taco_gdal", ROOT / "plugins")
# "# why  # doctest: +SKIP": a comment with a reason just before the directive.
_REASONED = re.compile(r"#\s*\S[^#]*#\s*doctest:\s*\+SKIP\s*$")


def _skip_lines() -> list[tuple[str, int, str]]:
    found = []
    for package in PACKAGES:
        for path in sorted(package.rglob("*.py")):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if "doctest: +SKIP" in line:
                    found.append((str(path.relative_to(ROOT)), number, line.strip()))
    return found


def test_every_skipped_example_says_why() -> None:
    unexplained = [
        f"{where}:{number}: {line}"
        for where, number, line in _skip_lines()
        if not _REASONED.search(line)
    ]
    assert unexplained == [], (
        "expected '# <why it cannot run here>  # doctest: +SKIP' on every skipped example "
        "(or make it run on the datasets of conftest.py); found:\n" + "\n".join(unexplained)
    )


def test_the_reason_pattern_tells_the_two_apart() -> None:
    assert _REASONED.search('>>> load("s3://b/x")  # needs a real bucket  # doctest: +SKIP')
    assert not _REASONED.search('>>> load("s3://b/x")  # doctest: +SKIP')
