"""Fixtures: the remote servers of tests/integration/remote, and datasets built once.

``grid_http`` / ``grid_s3``: 200 GeoTIFF samples published on the Range server
and on the S3 emulator (one build, module scope).
"""

from __future__ import annotations

import pytest

from tests.integration.remote.conftest import (  # noqa: F401  (fixtures)
    _http_server,
    _s3_emulator,
    http_remote,
    remote,
    s3_remote,
)
from tests.integration.torch._data import Written, write_grid, write_tiles

GRID_SAMPLES = 200


@pytest.fixture(scope="session")
def grid(tmp_path_factory: pytest.TempPathFactory) -> Written:
    """200 FILE samples (64x64, 2 bands uint16, ~16 KB each) with a sha256 checksum column."""
    return write_grid(tmp_path_factory.mktemp("grid"), GRID_SAMPLES, checksum=True)


@pytest.fixture(scope="session")
def tiles(tmp_path_factory: pytest.TempPathFactory) -> Written:
    """6 FOLDER samples with two FILE children each."""
    return write_tiles(tmp_path_factory.mktemp("tiles"), 6)
