"""Small datasets of the scaling benchmark (``bench.scale.datasets``), made once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.scale import datasets


@pytest.fixture(scope="session")
def scale_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("scale")


@pytest.fixture(scope="session")
def flat_zip(scale_folder: Path) -> Path:
    """3,000 level-0 samples with ISTAC polygons in four UTM zones."""
    return datasets.flat(3_000, scale_folder)


@pytest.fixture(scope="session")
def cascade_zip(scale_folder: Path) -> Path:
    """100 FOLDERs of 4 FILEs (``q0`` .. ``q3``)."""
    return datasets.cascade(400, scale_folder)
