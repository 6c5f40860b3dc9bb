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
