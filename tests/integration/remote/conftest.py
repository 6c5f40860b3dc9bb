"""Fixtures for remote reads: real servers on 127.0.0.1, started once, reset per test.

* ``http_remote``: a :class:`~tests.support.servers.range_server.RangeServer` serving a folder.
* ``s3_remote``: moto's S3 emulator behind the counting proxy.
* ``remote``: parametrized over both.

Every test starts with an empty log, no faults, no delay, an empty GDAL cache
and no pins, inside an Env with short timeouts (see ``TEST_TIMEOUTS``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.servers.range_server import RangeServer
from tests.support.servers.remote import Remote
from tests.support.servers.s3 import S3Emulator


@pytest.fixture(scope="session")
def _http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RangeServer, Path]]:
    root = tmp_path_factory.mktemp("www")
    with RangeServer(root=root) as server:
        yield server, root


@pytest.fixture(scope="session")
def _s3_emulator() -> Iterator[S3Emulator]:
    with S3Emulator() as s3:
        yield s3


@pytest.fixture
def http_remote(_http_server: tuple[RangeServer, Path]) -> Iterator[Remote]:
    server, root = _http_server
    remote = Remote("http", server, root=root)
    remote.fresh()
    with remote.env():
        yield remote
    remote.fresh()


@pytest.fixture
def s3_remote(_s3_emulator: S3Emulator) -> Iterator[Remote]:
    remote = Remote("s3", _s3_emulator.server, s3=_s3_emulator)
    remote.fresh()
    with remote.env():
        yield remote
    remote.fresh()


@pytest.fixture(params=["http", "s3"])
def remote(request: pytest.FixtureRequest) -> Remote:
    fixture: Remote = request.getfixturevalue(f"{request.param}_remote")
    return fixture
