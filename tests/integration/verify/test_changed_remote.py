"""A same-size replacement of a remote container is caught, whatever the server sends.

The scenario: load over HTTP, read one sample (GDAL's cache is now warm: it
knows the size and holds some blocks), replace the file by one of the same
size whose bytes differ inside another sample, then read that sample.
"""

from __future__ import annotations

import os
import shutil
import zipfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import rasterio
from osgeo import gdal
from rasterio.transform import from_origin

import taco_gdal
from taco_gdal.errors import TacoChangedError, TacoChecksumError
from taco_gdal.format.checksum import digest_bytes
from taco_gdal.io import pinning
from taco_gdal.io.sample import open_sample
from taco_gdal.model import Sample, Taco, Tortilla
from tests.support.servers.range_server import RangeServer


@pytest.fixture(autouse=True)
def _fresh_caches() -> Iterator[None]:
    gdal.VSICurlClearCache()
    pinning.pins.forget()
    yield
    gdal.VSICurlClearCache()
    pinning.pins.forget()


def _replace_same_size(path: Path, member: str) -> None:
    """Flip one byte inside ``member``, swap the file in, move its mtime 10 s on."""
    with zipfile.ZipFile(path) as z:
        info = z.getinfo(member)
    data = bytearray(path.read_bytes())
    data[info.header_offset + 30 + len(info.filename) + 40] ^= 0xFF
    tmp = path.with_name("next.tmp")
    tmp.write_bytes(bytes(data))
    stat = path.stat()
    os.utime(tmp, (stat.st_atime + 10, stat.st_mtime + 10))
    os.replace(tmp, path)


def _big_dataset(root: Path) -> Path:
    """Four 200 KB GeoTIFF samples: far apart enough that GDAL's read-ahead stays in one."""
    root.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(5)
    samples = []
    for i in range(4):
        path = root / f"b{i}.tif"
        profile = {"driver": "GTiff", "width": 450, "height": 450, "count": 1, "dtype": "uint8",
                   "crs": "EPSG:4326", "transform": from_origin(i, 40, 0.001, 0.001)}  # fmt: skip
        with rasterio.open(path, "w", **profile) as dst:
            dst.write(rng.integers(0, 255, size=(1, 450, 450), dtype=np.uint8))
        samples.append(Sample(f"s{i:03d}", path))
    taco = Taco(Tortilla(samples), id="big", dataset_version="1", description="changed file test",
                licenses=["CC0-1.0"], providers=[{"name": "tests"}], tasks=["other"])  # fmt: skip
    return taco_gdal.create(taco, root / "ds.tacozip", quiet=True)[0]


def _scenario(tmp_path: Path, server: RangeServer) -> tuple[str, list[str], list[str]]:
    src = _big_dataset(tmp_path / "w")
    served = tmp_path / "www"
    served.mkdir(exist_ok=True)
    shutil.copy(src, served / "ds.tacozip")
    with zipfile.ZipFile(src) as z:
        digests = [str(digest_bytes("xxh3", z.read(f"DATA/s{i:03d}"))) for i in range(4)]
    url = f"{server.url}/ds.tacozip"
    ds = taco_gdal.load(url)
    paths = ds.data["internal:gdal_vsi"].tolist()
    with open_sample(paths[0]) as sample:  # warm: size known, sample 0 cached
        sample.read()
    _replace_same_size(served / "ds.tacozip", "DATA/s002")
    return url, paths, digests


@pytest.mark.parametrize(("etag", "validator"), [(True, "ETag"), (False, "Last-Modified")])
def test_same_size_replacement_raises_changed(tmp_path: Path, etag: bool, validator: str) -> None:
    with RangeServer(root=tmp_path / "www", etag=etag, last_modified=True) as server:
        (tmp_path / "www").mkdir(exist_ok=True)
        url, paths, _ = _scenario(tmp_path, server)
        server.log.clear()
        with pytest.raises(TacoChangedError) as caught, open_sample(paths[2]):
            pass
        statuses = [r.status for r in server.log.records()]
    message = str(caught.value)
    assert url in message and validator in message
    assert "network" not in message and "mid-body" not in message
    assert 412 in statuses  # the conditional GET was refused: no new byte was used


def test_same_size_replacement_without_validators_is_caught_by_digest(tmp_path: Path) -> None:
    with RangeServer(root=tmp_path / "www", etag=False, last_modified=False) as server:
        (tmp_path / "www").mkdir(exist_ok=True)
        url, paths, digests = _scenario(tmp_path, server)
        with open_sample(paths[1], checksum=digests[1]) as ok:  # unchanged sample: fine
            assert ok.read().size
        with pytest.raises(TacoChecksumError) as caught, open_sample(paths[2], checksum=digests[2]):
            pass
    message = str(caught.value)
    assert paths[2] in message and url in message and digests[2] in message


def test_gdal_36_warm_cache_serves_new_bytes_without_revalidating(tmp_path: Path) -> None:
    """Why the precondition is needed: a plain read after the swap gets new bytes, no HEAD."""
    with RangeServer(root=tmp_path / "www") as server:
        (tmp_path / "www").mkdir(exist_ok=True)
        _, paths, digests = _scenario(tmp_path, server)
        server.log.clear()
        size = int(paths[2].split(",")[0].split("_")[1])
        handle = gdal.VSIFOpenL(paths[2], "rb")
        data = gdal.VSIFReadL(1, size, handle)
        gdal.VSIFCloseL(handle)
        methods = [r.method for r in server.log.records()]
    assert "HEAD" not in methods and methods.count("GET") == 1
    assert str(digest_bytes("xxh3", bytes(data))) != digests[2]


def test_same_size_replacement_on_s3_raises_changed(tmp_path: Path) -> None:
    from tests.support.servers.remote import Remote
    from tests.support.servers.s3 import S3Emulator

    src = _big_dataset(tmp_path / "w")
    with S3Emulator() as s3:
        remote = Remote("s3", s3.server, s3=s3)
        remote.fresh()
        with remote.env():
            url = remote.publish(src)
            paths = taco_gdal.load(url).data["internal:gdal_vsi"].tolist()
            with open_sample(paths[0]) as sample:
                sample.read()
            data = bytearray(src.read_bytes())
            with zipfile.ZipFile(src) as z:
                info = z.getinfo("DATA/s002")
            data[info.header_offset + 30 + len(info.filename) + 40] ^= 0xFF
            remote.replace(url, bytes(data))
            remote.log.clear()
            with pytest.raises(TacoChangedError, match="ETag") as caught, open_sample(paths[2]):
                pass
            statuses = {r.status for r in remote.log.records()}
        remote.fresh()
    assert "taco-test" in str(caught.value) and 412 in statuses


def test_remote_row_past_the_end_is_refused_before_any_read(tmp_path: Path) -> None:
    """Remote TACOCAT sources are not stat'ed at load; the sample open checks the range."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from taco_gdal.errors import TacoFormatError
    from tests.support.datasets import write_dataset

    cat = write_dataset(tmp_path / "www", "flat", "tacocat")
    table = pq.read_table(cat / "level0.parquet")
    sizes = table.column("internal:size").to_pylist()
    sizes[0] = 10**6
    i = table.column_names.index("internal:size")
    pq.write_table(table.set_column(i, "internal:size", pa.array(sizes, pa.int64())),
                   cat / "level0.parquet")  # fmt: skip
    with RangeServer(root=tmp_path / "www") as server:
        paths = taco_gdal.load(f"{server.url}/flat_tacocat/.tacocat").data["internal:gdal_vsi"]
        server.log.clear()
        with (
            pytest.raises(TacoFormatError, match="expected inside") as caught,
            open_sample(paths.iloc[0]),
        ):
            pass
        ranged = [r for r in server.log.records() if r.range is not None]
    assert "network" not in str(caught.value) and not ranged
