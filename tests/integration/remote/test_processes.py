"""Many processes over real servers: fork, spawn and forkserver pools read correct bytes.

Issue 10, requirements 1, 2 and 5, over the Range server and the S3 emulator:

* a pool of 4 workers, started after a load and a sample read in the parent
  (GDAL then holds a live connection to the server), reads 200 samples with
  ``open_sample`` and with a plain ``rasterio.open`` inside ``taco_gdal.Env()``;
  every array equals the parent's read of the same sample;
* a dataset filtered in the parent (sql, datetime and bbox below level 0, so
  a cascade up to level 0) gives the same rows at every level and the same
  FOLDER children in a child: inherited under ``fork`` (the parent's DuckDB
  was used before the fork), pickled under ``spawn``/``forkserver``, where the
  child never reads the container's metadata again (request log);
* inside ``with taco_gdal.Env():`` a plain ``rasterio.open`` of a sample of
  ~0.5 MB and of ~6.5 MB is one GET.
"""

from __future__ import annotations

import multiprocessing
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
import rasterio
from osgeo import gdal

import taco_gdal
from taco_gdal.format.vsi import to_vsi
from taco_gdal.io.header import read_header
from taco_gdal.io.sample import open_sample
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.write import create
from tests.integration.remote import _procs
from tests.support.blob import geotiff_bytes
from tests.support.datasets import write_dataset
from tests.support.servers.remote import Remote

pytestmark = [pytest.mark.network, pytest.mark.timeout(300)]

METHODS = ("fork", "spawn", "forkserver")
WORKERS = 4
TIMEOUT = 240


def _pool(method: str, dataset: taco_gdal.TacoDataset | None, remote: Remote):  # type: ignore[no-untyped-def]
    context = multiprocessing.get_context(method)
    return context.Pool(WORKERS, initializer=_procs.init, initargs=(dataset, remote.options()))


@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS)
def test_pool_reads_equal_parent_reads(remote: Remote, tmp_path: Path, method: str) -> None:
    zip_path, truth = _procs.flat_dataset(tmp_path, 100)
    ds = taco_gdal.load(remote.publish(zip_path))
    frame = ds.data
    paths = frame["internal:gdal_vsi"].tolist()
    ids = frame["id"].tolist()
    with open_sample(paths[0]) as src:  # the parent now holds a connection to the server
        assert np.array_equal(src.read(), truth[ids[0]])
    jobs = [(path, how) for how in ("open_sample", "rasterio") for path in paths]
    assert len(jobs) >= 200
    remote.log.clear()
    with _pool(method, ds, remote) as pool:
        results = pool.map_async(_procs.read, jobs, chunksize=3).get(timeout=TIMEOUT)
    # one GET per read, plus one size request (HEAD, or a 16 KiB GET on S3) per worker:
    # no worker re-opens the container or reads its metadata
    assert remote.log.count() <= len(jobs) + WORKERS, remote.log.describe()
    parent = {}
    for path in paths:
        with open_sample(path) as src:
            parent[path] = src.read()
    wrong = [
        (sample_id, how)
        for (path, how), sample_id, array in zip(jobs, ids + ids, results, strict=True)
        if not (np.array_equal(array, parent[path]) and np.array_equal(array, truth[sample_id]))
    ]
    assert wrong == [], f"{len(wrong)} of {len(jobs)} reads differ under {method}: {wrong[:5]}"


def _filtered(url: str) -> taco_gdal.TacoDataset:
    """sql at level 0, then datetime and bbox at level 1 (each cascades up to level 0)."""
    return (
        taco_gdal.load(url)
        .sql("SELECT * FROM data WHERE id <> 'tile001' ORDER BY id DESC")
        .filter_datetime("2023-01-01/2023-01-12", level=1)
        .filter_bbox(-3.70, 40.0, -3.35, 41.0, level=1)
    )


def _metadata_start(zip_path: Path) -> int:
    """Where the container's metadata starts: the level tables, COLLECTION, directory follow."""
    return min(e.offset for e in read_header(str(zip_path)).entries)


def _ranges(remote: Remote) -> list[tuple[int, int]]:
    out = []
    for record in remote.log.records(method="GET"):
        match = re.fullmatch(r"bytes=(\d+)-(\d+)", record.range or "")
        assert match, f"an unranged GET: {remote.log.describe()}"
        out.append((int(match[1]), int(match[2])))
    return out


def _assert_same(child: dict[str, object], parent: dict[str, object]) -> None:
    assert child["ids"] == parent["ids"]
    assert child["repr"] == parent["repr"]
    for level, (mine, theirs) in enumerate(zip(child["levels"], parent["levels"], strict=True)):  # type: ignore[call-overload]
        assert mine.equals(theirs), f"level {level} differs"
    assert isinstance(child["children"], pa.Table)
    assert child["children"].equals(parent["children"])


@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS)
def test_filtered_dataset_in_child(remote: Remote, tmp_path: Path, method: str) -> None:
    zip_path = write_dataset(tmp_path, "2level", "zip", n=6)
    ds = _filtered(remote.publish(zip_path))
    parent = _procs.summary(ds)  # DuckDB (spatial included) and GDAL used before the fork
    assert 0 < len(parent["ids"]) < 5
    assert parent["levels"][1].num_rows < 3 * len(parent["ids"])  # the cascade kept few children
    gdal.VSICurlClearCache()
    remote.log.clear()
    with _pool(method, ds, remote) as pool:
        child = pool.apply_async(_procs.query).get(timeout=TIMEOUT)
    _assert_same(child, parent)
    start = _metadata_start(zip_path)
    touched = [r for r in _ranges(remote) if r[1] >= start]
    assert touched == [], f"the child read metadata again: {remote.log.describe()}"


@pytest.mark.slow
def test_forked_child_after_many_queries_and_failed_one(http_remote: Remote, tmp_path) -> None:
    """The fork happens while the parent holds many sessions; the child still queries."""
    zip_path = write_dataset(tmp_path, "2level", "zip", n=6)
    url = http_remote.publish(zip_path)
    others = [
        taco_gdal.load(url).sql(f"SELECT * FROM data WHERE id <> 'tile00{i}'") for i in range(3)
    ]
    for other in others:
        assert len(other.data) == 5
    ds = _filtered(url)
    parent = _procs.summary(ds)
    with pytest.raises(taco_gdal.TacoQueryError):
        ds.sql("SELECT no_such_column FROM data")
    with _pool("fork", ds, http_remote) as pool:
        children = pool.map_async(_procs.query, range(WORKERS)).get(timeout=TIMEOUT)
    for child in children:
        _assert_same(child, parent)


def _two_sizes(folder: Path) -> tuple[Path, dict[str, np.ndarray]]:
    """A ZIP with a ~0.5 MB and a ~6.5 MB GeoTIFF sample."""
    src = folder / "src"
    src.mkdir(parents=True)
    samples, truth = [], {}
    for name, pixels in (("half_mb", 256), ("seven_mb", 896)):
        data, array = geotiff_bytes(7, pixels=pixels)
        (src / f"{name}.tif").write_bytes(data)
        truth[name] = array
        samples.append(Sample(name, src / f"{name}.tif"))
    taco = Taco(
        Tortilla(samples),
        id="sizes",
        dataset_version="1.0.0",
        description="two sample sizes",
        licenses=["CC-BY-4.0"],
        providers=[{"name": "taco_gdal tests"}],
        tasks=["classification"],
    )
    return create(taco, folder / "sizes.tacozip", quiet=True)[0], truth


def test_plain_rasterio_in_env_is_one_get(remote: Remote, tmp_path: Path) -> None:
    zip_path, truth = _two_sizes(tmp_path)
    url = remote.publish(zip_path)
    frame = taco_gdal.load(url).frame(internal=True)
    sizes = dict(zip(frame["id"], frame["internal:size"], strict=True))
    assert 400_000 < sizes["half_mb"] < 600_000 and 6_000_000 < sizes["seven_mb"] < 8_000_000
    for sample_id, path in zip(frame["id"], frame["internal:gdal_vsi"], strict=True):
        gdal.VSICurlClearCache()
        assert gdal.VSIStatL(to_vsi(url)) is not None  # the container's size is known
        remote.log.clear()
        with taco_gdal.Env(), rasterio.open(path) as src:
            assert np.array_equal(src.read(), truth[sample_id])
        gets = remote.log.records(method="GET")
        assert len(gets) == 1, f"{sample_id}: {remote.log.describe()}"
        assert remote.log.count() == 1, remote.log.describe()
        assert sizes[sample_id] - 16 * 1024 <= gets[0].bytes_sent <= sizes[sample_id] + 32 * 1024
        # the same open without the profile costs several requests (the 5 GETs)
        gdal.VSICurlClearCache()
        assert gdal.VSIStatL(to_vsi(url)) is not None
        remote.log.clear()
        with rasterio.open(path) as src:
            src.read()
        assert remote.log.count(method="GET") > 1


def test_env_profile_reads_8_mb_at_open_of_a_large_file(http_remote: Remote, tmp_path) -> None:
    """What the profile means for other files in the block: a big raster costs 8 MB at open."""
    data, _ = geotiff_bytes(3, pixels=1280)  # ~13 MB, larger than the ingest size
    (tmp_path / "big.tif").write_bytes(data)
    url = to_vsi(http_remote.publish(tmp_path / "big.tif"))
    opened: dict[str, int] = {}
    for label, inner in (("profile", {}), ("opted out", {"GDAL_INGESTED_BYTES_AT_OPEN": None})):
        gdal.VSICurlClearCache()
        assert gdal.VSIStatL(url) is not None
        http_remote.log.clear()
        with taco_gdal.Env(), taco_gdal.Env(**inner), rasterio.open(url) as src:
            assert src.width == 1280
        opened[label] = http_remote.log.bytes_sent()
    assert opened["profile"] >= 8 * 1024 * 1024, opened
    assert opened["opted out"] < 1024 * 1024, opened
