"""open_sample over HTTP and S3: one GET per sample, no over-read, no repeated HEAD."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from osgeo import gdal

from taco_gdal import Env
from taco_gdal.env import get_config
from taco_gdal.format.vsi import to_vsi
from taco_gdal.io import pinning
from taco_gdal.io.sample import open_sample
from taco_gdal.io.telemetry import network_stats, snapshot
from tests.support.blob import make_blob
from tests.support.servers.remote import Remote

pytestmark = [pytest.mark.network, pytest.mark.timeout(120)]

SLACK = 32 * 1024


def test_whole_sample_is_one_get(remote: Remote, tmp_path: Path) -> None:
    blob = make_blob(tmp_path)
    container = to_vsi(remote.publish(blob.path))
    first, second = blob.members[0], blob.members[1]

    with open_sample(first.vsi(container)) as src:
        assert np.array_equal(src.read(), first.pixels)
    gets = remote.log.records(method="GET")
    heads = remote.log.records(method="HEAD")
    assert len(heads) <= 1, remote.log.describe()
    sample_gets = [r for r in gets if r.bytes_sent >= first.size]
    assert len(sample_gets) == 1, remote.log.describe()
    assert sample_gets[0].bytes_sent <= first.size + SLACK

    remote.log.clear()  # same container, same process: no HEAD, one GET
    with open_sample(second.vsi(container)) as src:
        assert np.array_equal(src.read(), second.pixels)
    records = remote.log.records()
    assert [r.method for r in records] == ["GET"], remote.log.describe()
    assert second.size <= records[0].bytes_sent <= second.size + SLACK


def test_restricted_allowed_extensions_still_open(http_remote: Remote, tmp_path: Path) -> None:
    blob = make_blob(tmp_path, count=1)
    container = to_vsi(http_remote.publish(blob.path))
    restricted = Env(CPL_VSIL_CURL_ALLOWED_EXTENSIONS=".tif")  # a common machine-wide setting
    with restricted, open_sample(blob.members[0].vsi(container)) as src:
        assert np.array_equal(src.read(), blob.members[0].pixels)


def test_telemetry_matches_the_server_log(remote: Remote, tmp_path: Path) -> None:
    blob = make_blob(tmp_path, count=2)
    url = remote.publish(blob.path)
    container = to_vsi(url)
    with network_stats() as stats:
        for member in blob.members:
            with open_sample(member.vsi(container)) as src:
                src.read()
    assert stats.files, "GDAL reported no traffic"
    (path, traffic), *others = stats.files.items()
    assert not others and path == container
    assert traffic.total_requests == remote.log.count()
    assert traffic.requests.get("GET", 0) == remote.log.count(method="GET")
    assert traffic.bytes_downloaded == remote.log.bytes_sent()
    assert stats.requests() == remote.log.count()
    assert stats.bytes_downloaded == traffic.bytes_downloaded


def test_telemetry_blocks_nest(http_remote: Remote, tmp_path: Path) -> None:
    blob = make_blob(tmp_path, count=2)
    container = to_vsi(http_remote.publish(blob.path))
    with network_stats() as outer:
        with open_sample(blob.members[0].vsi(container)) as src:
            src.read()
        with network_stats() as inner, open_sample(blob.members[1].vsi(container)) as src:
            src.read()
    assert inner.requests() == 1  # the second sample: one GET, the size is known
    assert outer.requests() == http_remote.log.count() == inner.requests() + 2

    gdal.VSICurlClearCache()  # after the block GDAL stops counting again
    with open_sample(blob.members[0].vsi(container)) as src:
        src.read()
    assert snapshot() == {}


def test_profile_only_around_the_open(http_remote: Remote, tmp_path: Path) -> None:
    blob = make_blob(tmp_path, count=1)
    container = to_vsi(http_remote.publish(blob.path))
    with open_sample(blob.members[0].vsi(container)) as src:
        assert get_config("GDAL_INGESTED_BYTES_AT_OPEN") is None
        assert np.array_equal(src.read(), blob.members[0].pixels)


def test_local_samples_open_without_network(tmp_path: Path) -> None:
    blob = make_blob(tmp_path, count=2)
    for member in blob.members:
        with open_sample(member.vsi(str(blob.path))) as src:
            assert np.array_equal(src.read(), member.pixels)
    assert pinning.pins.get(str(blob.path)) is None
