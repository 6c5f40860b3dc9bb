"""Datasets for the verify tests, written once per module."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.datasets import write_dataset


@pytest.fixture(scope="module")
def datasets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("verify")
    return {
        container: write_dataset(root, "2level", container)  # type: ignore[arg-type]
        for container in ("zip", "folder", "tacocat")
    }
