"""Faults: 503s are retried, a connection dropped mid-body is an error naming the URL.

Metadata reads go through ``VSIFile`` (``read_range``), sample reads through
``open_sample``; both must survive transient 503s and must never hang or hand
back partial bytes.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from taco_gdal import Env, TacoIOError
from taco_gdal.format.vsi import to_vsi
from taco_gdal.io.sample import open_sample
from taco_gdal.io.vsi import read_range
from tests.support.blob import make_blob
from tests.support.servers.remote import Remote

pytestmark = [
    pytest.mark.network,
    pytest.mark.timeout(120),
    # GDAL announces each retry as a warning ("HTTP error code: 503 ... Retrying"); once
    # pyogrio is imported (geopandas, elsewhere in the suite) its GDAL error handler turns
    # those into RuntimeWarnings.  Here they are the expected trace of the retries.
    pytest.mark.filterwarnings("ignore:HTTP error code:RuntimeWarning"),
]


@pytest.mark.parametrize("methods", ["GET,HEAD", "GET"])  # the first requests / the GETs
def test_503_twice_then_200_is_survived(remote: Remote, tmp_path: Path, methods: str) -> None:
    blob = make_blob(tmp_path, count=2)
    url = remote.publish(blob.path)
    container = to_vsi(url)
    first, second = blob.members

    remote.server.fail(blob.path.name, times=2, status=503, methods=methods)
    assert (
        read_range(container, first.offset, 100)
        == blob.path.read_bytes()[first.offset : first.offset + 100]
    )
    assert [r.status for r in remote.log.records()].count(503) == 2, remote.log.describe()

    remote.fresh()
    remote.server.fail(blob.path.name, times=2, status=503, methods=methods)
    with open_sample(second.vsi(container)) as src:
        assert np.array_equal(src.read(), second.pixels)
    assert [r.status for r in remote.log.records()].count(503) == 2, remote.log.describe()


def test_429_is_retried_too(http_remote: Remote, tmp_path: Path) -> None:
    blob = make_blob(tmp_path, count=1)
    container = to_vsi(http_remote.publish(blob.path))
    http_remote.server.fail(blob.path.name, times=2, status=429, methods="GET")
    with open_sample(blob.members[0].vsi(container)) as src:
        assert np.array_equal(src.read(), blob.members[0].pixels)


def test_dropped_metadata_read_names_the_url(remote: Remote, tmp_path: Path) -> None:
    blob = make_blob(tmp_path, count=1)
    url = remote.publish(blob.path)
    remote.server.drop(blob.path.name, times=None, after_bytes=3000)
    with pytest.raises(TacoIOError) as info:
        read_range(to_vsi(url), 0, 100_000, "metadata")
    assert url.split("://", 1)[1] in str(info.value)
    assert "connection" in str(info.value)


def test_dropped_sample_read_names_the_url(remote: Remote, tmp_path: Path) -> None:
    blob = make_blob(tmp_path, count=1)
    url = remote.publish(blob.path)
    container = to_vsi(url)
    remote.server.drop(blob.path.name, times=None, after_bytes=50_000)
    with pytest.raises(TacoIOError) as info, open_sample(blob.members[0].vsi(container)):
        pytest.fail("a sample whose bytes never fully arrived must not open")
    assert url.split("://", 1)[1] in str(info.value)

    remote.server.reset()  # the server recovers: nothing partial was left in GDAL's cache
    with open_sample(blob.members[0].vsi(container)) as src:
        assert np.array_equal(src.read(), blob.members[0].pixels)


def test_one_drop_is_retried(remote: Remote, tmp_path: Path) -> None:
    blob = make_blob(tmp_path, count=1)
    container = to_vsi(remote.publish(blob.path))
    remote.server.drop(blob.path.name, times=1, after_bytes=50_000)
    with open_sample(blob.members[0].vsi(container)) as src:
        assert np.array_equal(src.read(), blob.members[0].pixels)
    sent = [r.bytes_sent for r in remote.log.records(method="GET")]
    assert 50_000 in sent and len(sent) >= 2, remote.log.describe()


def test_stalled_server_times_out(http_remote: Remote, tmp_path: Path) -> None:
    blob = make_blob(tmp_path, count=1)
    container = to_vsi(http_remote.publish(blob.path))
    http_remote.server.delay = 3.0
    start = time.monotonic()
    with Env(GDAL_HTTP_TIMEOUT="1", GDAL_HTTP_MAX_RETRY="0"), pytest.raises(TacoIOError):
        read_range(container, 0, 100)
    assert time.monotonic() - start < 10
