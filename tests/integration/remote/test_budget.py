"""Request budgets of remote reads, counted in the server's own log, over HTTP and S3.

Budgets (per container format):

* ZIP open: at most 3 requests, at most one HEAD (header + one metadata range).
* Navigating into a FOLDER sample: no request (its children are rows of the
  level table read at open; ``__meta__`` is read only by a frame without
  ``internal:current_id``).
* A whole sample (<= 8 MB): one GET, at most 32 KiB beyond the sample.
* Later samples of the same container in the same process: no HEAD.
* TACOCAT of 50 parts: opening reads ``.tacocat/`` metadata only, no part.
* The first touch of a container costs GDAL's size lookup: a HEAD over HTTP, a
  16 KiB GET at byte 0 over S3 (its bytes are cached and reused).

Between measured steps GDAL's caches are emptied (``gdal.VSICurlClearCache()``);
where a step is about a container whose size the process already knows, the
size is looked up again before the log is cleared (``_cold``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from osgeo import gdal

from taco_gdal.format.vsi import parse_subfile, to_vsi
from taco_gdal.io import pinning
from taco_gdal.io.sample import open_sample
from taco_gdal.read import TacoDataFrame, load
from tests.integration.remote._datasets import BANDS, write_catalog, write_tiles
from tests.support.servers.log import RequestRecord
from tests.support.servers.remote import Remote

pytestmark = [pytest.mark.network, pytest.mark.timeout(300)]

SLACK = 32 * 1024
PARTS = 50


@dataclass(frozen=True)
class Local:
    zip: Path
    folder: Path
    tiles: dict[tuple[str, str], np.ndarray]
    catalog: Path
    catalog_pixels: dict[str, np.ndarray]


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Local]:
    root = tmp_path_factory.mktemp("budget")
    zip_path, tiles = write_tiles(root / "zip", "zip")
    folder_path, _ = write_tiles(root / "folder", "folder")
    catalog, pixels = write_catalog(root / "cat", parts=PARTS)
    yield Local(zip_path, folder_path, tiles, catalog, pixels)


def _cold(remote: Remote, container: str | None = None) -> None:
    """Empty GDAL's caches and the log; re-learn ``container``'s size first if given."""
    gdal.VSICurlClearCache()
    if container is not None:
        assert gdal.VSIStatL(container) is not None
    remote.log.clear()


def _read_sample(vsi: str, expected: np.ndarray) -> None:
    with open_sample(vsi) as src:
        assert np.array_equal(src.read(), expected)


def _one_exact_get(remote: Remote, size: int) -> RequestRecord:
    records = remote.log.records()
    assert [r.method for r in records] == ["GET"], remote.log.describe()
    assert records[0].bytes_sent <= size + SLACK, remote.log.describe()
    return records[0]


def _tile(frame: object, tile: str) -> TacoDataFrame:
    assert isinstance(frame, TacoDataFrame)
    child = frame.read(tile)
    assert isinstance(child, TacoDataFrame)
    return child


def _file(frame: TacoDataFrame, key: str) -> str:
    path = frame.read(key)
    assert isinstance(path, str)
    return path


def test_zip_budget(remote: Remote, local: Local) -> None:
    url = remote.publish(local.zip)
    container = to_vsi(url)

    ds = load(url)
    assert remote.log.count() <= 3, remote.log.describe()
    assert remote.log.count(method="HEAD") <= 1, remote.log.describe()
    pin = pinning.pins.get(container)  # pinned while its metadata was read, at no extra cost
    assert pin is not None and pin.size == local.zip.stat().st_size and pin.etag

    _cold(remote, container)
    tile = _tile(ds.data, "tile1")
    assert remote.log.count() == 0, remote.log.describe()  # children from the level table

    _cold(remote, container)
    vsi = _file(tile, "b0")
    size = parse_subfile(vsi).size
    _read_sample(vsi, local.tiles[("tile1", "b0")])
    record = _one_exact_get(remote, size)
    # the sample itself (on S3 the size probe at byte 0 may already hold its first bytes)
    assert record.bytes_sent >= size - 16 * 1024

    remote.log.clear()  # later samples, same process: no HEAD, one GET each
    for t in ("tile0", "tile2"):
        child = _tile(ds.data, t)
        for band in BANDS:
            _read_sample(_file(child, band), local.tiles[(t, band)])
    assert remote.log.count(method="HEAD") == 0, remote.log.describe()
    sample_gets = [r for r in remote.log.records() if r.bytes_sent > 64 * 1024]
    assert len(sample_gets) == 4, remote.log.describe()
    assert all(r.bytes_sent <= size + SLACK for r in sample_gets)


def test_folder_budget(remote: Remote, local: Local) -> None:
    url = remote.publish(local.folder)

    ds = load(url)
    paths = [r.path for r in remote.log.records()]
    assert not [p for p in paths if "/DATA/" in p], remote.log.describe()  # metadata only
    assert remote.log.count(method="GET", path=".parquet") == 2, remote.log.describe()

    _cold(remote)
    tile = _tile(ds.data, "tile1")
    assert remote.log.count() == 0, remote.log.describe()  # children from the level table

    for band in BANDS:  # each FILE is a file of its own: one size lookup, one GET
        _cold(remote)
        vsi = _file(tile, band)
        _read_sample(vsi, local.tiles[("tile1", band)])
        size = (local.folder / "DATA" / "tile1" / band).stat().st_size
        records = remote.log.records()
        assert len(records) <= 2 and remote.log.count(method="HEAD") <= 1, remote.log.describe()
        assert sum(r.bytes_sent for r in records) <= size + SLACK, remote.log.describe()
        data_gets = [r for r in records if r.method == "GET" and r.bytes_sent > 16 * 1024]
        assert len(data_gets) == 1, remote.log.describe()


def test_tacocat_budget(remote: Remote, local: Local) -> None:
    base = remote.publish(local.catalog.parent)
    url = f"{base}/.tacocat"

    ds = load(url)
    records = remote.log.records()
    assert not [r for r in records if r.path.endswith(".tacozip")], remote.log.describe()
    assert all(".tacocat" in r.path or r.status == 404 or r.path.endswith("/") for r in records)
    assert len(ds.data) == 2 * PARTS

    _cold(remote)  # the first sample of a part: the part's size lookup, then one GET
    first = _file(ds.data, "s010")
    part = parse_subfile(first).container
    assert part.endswith("_part0006.tacozip")
    _read_sample(first, local.catalog_pixels["s010"])
    records = remote.log.records()
    assert len(records) <= 2 and remote.log.count(method="HEAD") <= 1, remote.log.describe()
    assert all(r.path.endswith("_part0006.tacozip") for r in records)
    if remote.kind == "http":  # HEAD, then the sample
        assert [r.method for r in records] == ["HEAD", "GET"], remote.log.describe()
    # on S3 GDAL learns the size from a 16 KiB GET at byte 0, which holds the sample's start
    assert sum(r.bytes_sent for r in records) <= parse_subfile(first).size + SLACK

    _cold(remote, part)  # the other sample of that part, cold data: one GET, no HEAD
    second = _file(ds.data, "s011")
    assert parse_subfile(second).container == part
    _read_sample(second, local.catalog_pixels["s011"])
    _one_exact_get(remote, parse_subfile(second).size)
