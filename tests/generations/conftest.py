"""Fixtures for tests/generations: the committed v1/v3 files and what their own readers showed."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

GOLDEN = Path(__file__).resolve().parent / "golden"

# Fixture recipes run by scripts/make_generations.py in throwaway venvs (taco-eo,
# tacotoolbox 0.5): not importable here, so not collected (--doctest-modules).
collect_ignore = ["_build_v1.py", "_build_v3.py"]


def manifest() -> dict[str, Any]:
    """golden/manifest.json; a missing manifest is a failure, not a skip."""
    path = GOLDEN / "manifest.json"
    assert path.is_file(), f"missing {path}: run scripts/make_generations.py"
    value: dict[str, Any] = json.loads(path.read_text())
    return value


def golden(relative: str) -> Path:
    """A committed fixture file, checked against the manifest's SHA-256."""
    path = GOLDEN / relative
    assert path.exists(), f"missing fixture {path}: run scripts/make_generations.py"
    if path.is_file():
        files = {k: v for e in manifest()["entries"].values() for k, v in e["files"].items()}
        assert hashlib.sha256(path.read_bytes()).hexdigest() == files[relative], relative
    return path


@pytest.fixture(scope="session")
def taco_eo_view() -> dict[str, Any]:
    """What taco-eo 0.14.2's reader showed for each v3 fixture (committed dump)."""
    views: dict[str, Any] = json.loads(golden("v3/taco_eo_view.json").read_text())["views"]
    return views
