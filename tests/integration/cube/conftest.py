"""Fixtures: the remote servers of tests/integration/remote and the cube datasets, built once."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.cube._data import START as _START
from tests.integration.cube._data import Scene, write_mixed, write_nested, write_series
from tests.integration.remote.conftest import (  # noqa: F401  (fixtures)
    _http_server,
    _s3_emulator,
    http_remote,
    remote,
    s3_remote,
)


@pytest.fixture(scope="session")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_mixed(tmp_path_factory.mktemp("cube_mixed"))


@pytest.fixture(scope="session")
def mixed_shapes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    odd = [Scene("odd0", "EPSG:32630", 200.0, _START, slice(0, 0)),
           Scene("odd1", "EPSG:32630", 200.0, _START, slice(0, 0))]  # fmt: skip
    return write_mixed(tmp_path_factory.mktemp("cube_shapes"), extra=odd)


@pytest.fixture(scope="session")
def series(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_series(tmp_path_factory.mktemp("cube_series"))


@pytest.fixture(scope="session")
def nested(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_nested(tmp_path_factory.mktemp("cube_nested"))


@pytest.fixture(scope="session")
def mixed_plain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``mixed`` written without the pixel-type columns (STAC and ISTAC extensions only)."""
    return write_mixed(tmp_path_factory.mktemp("cube_plain"), pixel_type=False)


@pytest.fixture(scope="session")
def series_float(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Five float32 scenes with nodata -9999."""
    return write_series(tmp_path_factory.mktemp("cube_float"), dtypes=("float32",), nodata=-9999)


@pytest.fixture(scope="session")
def series_kinds(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Five scenes, uint8 and uint16 in turn."""
    return write_series(tmp_path_factory.mktemp("cube_kinds"), dtypes=("uint8", "uint16"))
