"""Fixtures of the data-model tests: a small file samples can point to, a Taco factory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from taco_gdal.model import Taco, Tortilla

COLLECTION: dict[str, Any] = {
    "id": "demo",
    "dataset_version": "1.0.0",
    "description": "a dataset for tests",
    "licenses": ["CC-BY-4.0"],
    "providers": [{"name": "Test Lab"}],
    "tasks": ["classification"],
}


@pytest.fixture
def blob(tmp_path: Path) -> Path:
    """A 5-byte file."""
    path = tmp_path / "blob.bin"
    path.write_bytes(b"hello")
    return path


@pytest.fixture
def make_taco() -> Callable[..., Taco]:
    """``make_taco(tortilla, **overrides)`` with valid collection fields."""

    def make(tortilla: Tortilla, **overrides: Any) -> Taco:
        return Taco(tortilla, **{**COLLECTION, **overrides})

    return make
