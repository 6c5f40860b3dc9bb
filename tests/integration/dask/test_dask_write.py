"""create(..., client=...) on a real LocalCluster (2 worker processes).

One cluster per module (starting one costs seconds).  Every test compares the
parallel result with a sequential ``create()`` of the same parts: every
sample's bytes, every metadata table (the levels with their offsets, and the
TACOCAT), and COLLECTION.json.  The killed-worker test kills the worker process
with SIGKILL while it is writing its part (an unnamed file of the output folder
is open and growing), and the job must still complete, with nothing partial
left behind.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import distributed
import numpy as np
import pytest
import rasterio
from rasterio.transform import from_origin

import taco_gdal
from taco_gdal.errors import TacoExistsError, TacoValidationError
from taco_gdal.extensions import GeotiffStats
from taco_gdal.format.names import TACOCAT_DIR, TACOCAT_FILE
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.write import create
from taco_gdal.write._sources import read_zip_metadata
from taco_gdal.write.dask import TASK_PREFIX, samples_on_workers

MIB = 1024 * 1024


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0"
    )
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def _tiffs(folder: Path, n: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    profile = {"driver": "GTiff", "width": 8, "height": 8, "count": 1, "dtype": "uint8"}
    paths = []
    for i in range(n):
        path = folder / f"t{i:03d}.tif"
        transform = from_origin(i * 0.01, 40.0, 0.001, 0.001)
        with rasterio.open(path, "w", crs="EPSG:4326", transform=transform, **profile) as dst:
            dst.write(rng.integers(0, 255, (1, 8, 8), dtype=np.uint8))
        paths.append(path)
    return paths


def _taco(samples: list[Sample]) -> Taco:
    return Taco(
        Tortilla(samples), id="daskwrite", dataset_version="1", description="dask test",
        licenses=["CC0-1.0"], providers=[{"name": "t"}], tasks=["other"],
    )  # fmt: skip


def _two_level(tiffs: list[Path]) -> Taco:
    roots = []
    for i in range(0, len(tiffs) - 1, 2):
        children = [Sample("a", tiffs[i], band=1), Sample("b", tiffs[i + 1], band=2)]
        roots.append(Sample(f"r{i:03d}", Tortilla(children), cloud=float(i)))
    return _taco(roots)


def _sample_bytes(path: Path) -> dict[str, bytes]:
    """``relative path -> bytes`` of every FILE sample, read through each row's offsets."""
    out: dict[str, bytes] = {}
    levels = read_zip_metadata(path).levels
    with open(path, "rb") as f:
        for level, table in enumerate(levels):
            key = "id" if level == 0 else "internal:relative_path"
            for row in table.select([key, "type", "internal:offset", "internal:size"]).to_pylist():
                if row["type"] == "FILE":
                    f.seek(row["internal:offset"])
                    out[row[key]] = f.read(row["internal:size"])
    return out


def _same_dataset(parallel: list[Path], sequential: list[Path]) -> None:
    assert [p.name for p in parallel] == [p.name for p in sequential]
    for a, b in zip(parallel, sequential, strict=True):
        ma, mb = read_zip_metadata(a), read_zip_metadata(b)
        assert len(ma.levels) == len(mb.levels)
        for ta, tb in zip(ma.levels, mb.levels, strict=True):
            assert ta.equals(tb)  # same rows, values, offsets and sizes
        assert ma.collection == mb.collection
        assert _sample_bytes(a) == _sample_bytes(b)
    folder_a, folder_b = parallel[0].parent, sequential[0].parent
    if (folder_b / TACOCAT_FILE).exists():
        assert (folder_a / TACOCAT_FILE).read_bytes() == (folder_b / TACOCAT_FILE).read_bytes()
        for name in sorted(os.listdir(folder_b / TACOCAT_DIR)):
            assert (folder_a / TACOCAT_DIR / name).read_bytes() == (
                folder_b / TACOCAT_DIR / name
            ).read_bytes()


def _no_leftovers(folder: Path) -> None:
    assert [p.name for p in folder.iterdir() if p.name.startswith(".taco-")] == []


def test_parallel_equals_sequential(client: Any, tmp_path: Path) -> None:
    taco = _two_level(_tiffs(tmp_path / "src", 24))
    (tmp_path / "par").mkdir()
    (tmp_path / "seq").mkdir()
    par = create(
        taco, tmp_path / "par" / "d.tacozip", partitions=4, client=client, quiet=True,
        checksum="xxh3",
    )  # fmt: skip
    seq = create(taco, tmp_path / "seq" / "d.tacozip", partitions=4, quiet=True, checksum="xxh3")
    assert len(par) == 4
    _same_dataset(par, seq)
    _no_leftovers(tmp_path / "par")
    ds = taco_gdal.load(tmp_path / "par" / TACOCAT_DIR)
    assert len(ds.data) == 12


def test_existing_part_is_not_replaced(client: Any, tmp_path: Path) -> None:
    taco = _two_level(_tiffs(tmp_path / "src", 8))
    (tmp_path / "d_part0002.tacozip").write_bytes(b"keep me")
    with pytest.raises(TacoExistsError, match="d_part0002"):
        create(taco, tmp_path / "d.tacozip", partitions=2, client=client, quiet=True)
    assert (tmp_path / "d_part0002.tacozip").read_bytes() == b"keep me"
    assert not (tmp_path / "d_part0001.tacozip").exists()


def test_group_by_and_partitions_are_exclusive(client: Any, tmp_path: Path) -> None:
    taco = _two_level(_tiffs(tmp_path / "src", 4))
    with pytest.raises(TacoValidationError, match="partitions or group_by"):
        create(taco, tmp_path / "d.tacozip", partitions=2, group_by="cloud", client=client)


class _KillOnFirstWrite(distributed.WorkerPlugin):
    """Kill (SIGKILL) the worker running the first part task, while it writes the part.

    A thread watches the task: once the worker holds an unnamed (O_TMPFILE) file
    in the output folder that already has bytes, the part is being written and
    the process is killed.  A marker file makes it happen once per test.
    """

    def __init__(self, folder: str, marker: str) -> None:
        self.folder = folder
        self.marker = marker

    def setup(self, worker: Any) -> None:
        self.worker = worker

    def transition(self, key: Any, start: str, finish: str, **kwargs: Any) -> None:
        if finish != "executing" or TASK_PREFIX not in str(key):
            return
        try:
            fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return
        os.close(fd)
        threading.Thread(target=self._kill_mid_write, daemon=True).start()

    def _kill_mid_write(self) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            for name in os.listdir("/proc/self/fd"):
                try:
                    target = os.readlink(f"/proc/self/fd/{name}")
                    size = os.fstat(int(name)).st_size
                except OSError:
                    continue
                if target.startswith(self.folder) and "(deleted)" in target and size > MIB:
                    Path(self.marker).write_text(f"killed at {size} bytes")
                    os.kill(os.getpid(), 9)
            time.sleep(0.001)


def test_worker_killed_mid_write_is_retried(client: Any, tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    rng = np.random.default_rng(3)
    samples = []
    for i in range(16):  # 4 parts of 4 x 2 MiB: each part takes a while to write
        path = src / f"b{i:02d}.bin"
        path.write_bytes(rng.integers(0, 255, 2 * MIB, dtype=np.uint8).tobytes())
        samples.append(Sample(f"s{i:02d}", path))
    taco = _taco(samples)
    out = tmp_path / "par"
    out.mkdir()
    marker = tmp_path / "killed"
    plugin = _KillOnFirstWrite(str(out), str(marker))
    client.register_plugin(plugin, name="kill-on-first-write")
    try:
        par = create(taco, out / "d.tacozip", partitions=4, client=client, quiet=True, retries=2)
    finally:
        client.unregister_worker_plugin("kill-on-first-write")
    assert marker.read_text().startswith("killed at ")  # a worker really died mid-write
    (tmp_path / "seq").mkdir()
    seq = create(taco, tmp_path / "seq" / "d.tacozip", partitions=4, quiet=True)
    _same_dataset(par, seq)
    _no_leftovers(out)
    client.wait_for_workers(2, timeout=60)


def test_pixel_extensions_run_on_the_workers(client: Any, tmp_path: Path) -> None:
    tiffs = [str(p) for p in _tiffs(tmp_path / "src", 6)]
    remote = samples_on_workers(client, _stats_sample, tiffs, batch_size=2)
    local = [_stats_sample(p) for p in tiffs]
    assert [s.id for s in remote] == [s.id for s in local]
    assert [s["geotiff:stats"] for s in remote] == [s["geotiff:stats"] for s in local]
    assert os.getpid() not in {s["worker_pid"] for s in remote}  # computed on the workers
    out = create(_taco(remote), tmp_path / "stats.tacozip", quiet=True)[0]
    stats = read_zip_metadata(out).levels[0]
    assert stats.column("geotiff:stats").to_pylist() == [s["geotiff:stats"] for s in local]


def _stats_sample(path: str) -> Sample:
    sample = Sample(Path(path).stem, path).extend_with(GeotiffStats())
    return sample.extend_with({"worker_pid": os.getpid()})


def test_workers_read_http_sources_through_vsi(client: Any, tmp_path: Path) -> None:
    from tests.support.servers.range_server import RangeServer

    www = tmp_path / "www"
    www.mkdir()
    rng = np.random.default_rng(11)
    for i in range(6):
        (www / f"s{i}.bin").write_bytes(rng.integers(0, 255, 300_000, dtype=np.uint8).tobytes())
    with RangeServer(root=www) as server:
        taco = _taco([Sample(f"s{i}", f"{server.url}/s{i}.bin") for i in range(6)])
        server.log.clear()
        out = tmp_path / "par"
        out.mkdir()
        par = create(taco, out / "d.tacozip", partitions=3, client=client, quiet=True)
        served = server.log.records(method="GET")
        assert served, server.log.describe()  # the workers fetched the samples over HTTP
    for path in par:
        meta = read_zip_metadata(path).levels[0]
        for sample_id, data in zip(meta.column("id").to_pylist(), _sample_bytes(path).values(),
                                   strict=True):  # fmt: skip
            assert data == (www / f"{sample_id}.bin").read_bytes()
    _no_leftovers(out)
