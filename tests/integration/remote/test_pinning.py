"""Pinning: a container replaced on the server is refused, an unchanged one costs nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from osgeo import gdal

from taco_gdal import TacoChangedError
from taco_gdal.format.vsi import to_vsi
from taco_gdal.io import pinning
from taco_gdal.io.sample import open_sample
from taco_gdal.io.vsi import read_range
from tests.support.blob import make_blob
from tests.support.servers.remote import Remote

pytestmark = [pytest.mark.network, pytest.mark.timeout(120)]


def test_first_read_records_size_and_etag(remote: Remote, tmp_path: Path) -> None:
    blob = make_blob(tmp_path, count=1)
    container = to_vsi(remote.publish(blob.path))
    read_range(container, 0, 64)
    pin = pinning.pins.get(container)
    assert pin is not None
    assert pin.size == blob.path.stat().st_size
    assert pin.etag and pin.etag.startswith('"')
    assert remote.log.count(method="HEAD") <= 1, remote.log.describe()
    assert remote.log.count() <= 2, remote.log.describe()  # the pin is GDAL's own size lookup


def test_unchanged_container_is_checked_for_free(remote: Remote, tmp_path: Path) -> None:
    blob = make_blob(tmp_path, count=2)
    container = to_vsi(remote.publish(blob.path))
    read_range(container, 0, 64)
    remote.log.clear()
    with open_sample(blob.members[0].vsi(container)) as src:
        src.read()
    assert [r.method for r in remote.log.records()] == ["GET"], remote.log.describe()
    gdal.VSICurlClearCache()  # GDAL forgets the size: the check asks the server, once
    remote.log.clear()
    with open_sample(blob.members[1].vsi(container)) as src:
        src.read()
    assert remote.log.count() == 2, remote.log.describe()


@pytest.mark.parametrize("how", ["size", "etag"])
def test_replaced_container_raises(remote: Remote, tmp_path: Path, how: str) -> None:
    blob = make_blob(tmp_path, count=1)
    url = remote.publish(blob.path)
    container = to_vsi(url)
    read_range(container, 0, 64)  # metadata read: pinned here
    original = blob.path.read_bytes()
    if how == "size":
        replacement = original + b"appended"
    else:  # same size, other bytes: only the ETag tells
        replacement = original[:100] + bytes(255 - b for b in original[100:200]) + original[200:]
    remote.replace(url, replacement)
    gdal.VSICurlClearCache()  # a new process, or GDAL's cache expired

    member = blob.members[0]
    with pytest.raises(TacoChangedError) as info, open_sample(member.vsi(container)):
        pytest.fail("a changed container must not be read")
    message = str(info.value)
    assert container in message and "changed" in message
    assert ("ETag" in message) if how == "etag" else (str(len(original)) in message)
    with pytest.raises(TacoChangedError):
        read_range(container, 0, 64)


def test_forgetting_the_pin_accepts_the_new_version(http_remote: Remote, tmp_path: Path) -> None:
    blob = make_blob(tmp_path, count=1)
    url = http_remote.publish(blob.path)
    container = to_vsi(url)
    read_range(container, 0, 64)
    http_remote.replace(url, b"new" + blob.path.read_bytes())
    gdal.VSICurlClearCache()
    pinning.pins.forget(container)
    assert read_range(container, 0, 3) == b"new"


def test_local_files_are_not_pinned(tmp_path: Path) -> None:
    path = tmp_path / "local.bin"
    path.write_bytes(b"x" * 10)
    assert pinning.verify(str(path)) is None
    assert pinning.pins.get(str(path)) is None
