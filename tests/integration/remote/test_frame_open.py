"""``TacoDataFrame.open(key)``: the read profile offered to users, locally and remotely."""

from __future__ import annotations

import numpy as np
import pytest
from osgeo import gdal

from taco_gdal import TacoNavigationError, load
from taco_gdal.format.vsi import parse_subfile, to_vsi
from taco_gdal.read import TacoDataFrame
from tests.integration.remote._datasets import write_tiles
from tests.support.servers.remote import Remote


def _tile(ds_path: str, tile: str) -> TacoDataFrame:
    child = load(ds_path).data.read(tile)
    assert isinstance(child, TacoDataFrame)
    return child


def test_open_local_sample_and_refuse_folder(tmp_path):
    zip_path, truth = write_tiles(tmp_path / "z", "zip", tiles=2, pixels=64)
    frame = load(zip_path).data
    with pytest.raises(TacoNavigationError, match="is a FOLDER"):
        frame.open("tile0")
    tile = frame.read("tile1")
    assert isinstance(tile, TacoDataFrame)
    with tile.open("b1") as src:
        assert np.array_equal(src.read(), truth[("tile1", "b1")])
    with pytest.raises(TacoNavigationError, match="b9"):
        tile.open("b9")


@pytest.mark.network
@pytest.mark.timeout(120)
def test_open_remote_sample_costs_one_get(remote: Remote, tmp_path) -> None:
    zip_path, truth = write_tiles(tmp_path / "z", "zip", tiles=2)
    url = remote.publish(zip_path)
    tile = _tile(url, "tile0")
    size = parse_subfile(tile.read("b0")).size  # type: ignore[arg-type]
    gdal.VSICurlClearCache()
    assert gdal.VSIStatL(to_vsi(url)) is not None  # the container's size is known ...
    remote.log.clear()
    with tile.open("b0") as src:  # ... so the sample is exactly one GET
        assert np.array_equal(src.read(), truth[("tile0", "b0")])
    records = remote.log.records()
    assert [r.method for r in records] == ["GET"], remote.log.describe()
    # on S3 the size probe (a 16 KiB GET at byte 0) may already hold the sample's start
    assert size - 16 * 1024 <= records[0].bytes_sent <= size + 32 * 1024
