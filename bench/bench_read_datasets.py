"""Datasets for the reader benchmarks, and the setup both readers need.

* ``make_10k``: 10,000 FILE samples, each its own 16x16 GeoTIFF, written by
  the reference writer tacotoolbox 0.26.9 (columns ``cloud_cover`` double,
  ``split`` string, ``tile`` int64, ``acq`` timestamp), as in the reference
  timing study.
* ``make_metadata_zip``: big metadata-only TACO ZIPs.  Every row points at one
  of a few tiny GeoTIFF members (FOLDER rows at one tiny ``__meta__``), so a
  million rows cost a few megabytes of parquet and seconds to generate.  The
  archive is built with tacozip 0.13.0 (the reference's ZIP library):
  members first, then the TACO_HEADER entries, as the reference writer does.

``prepare_tacoreader`` copies the spatial extension from the
``duckdb_extension_spatial`` wheel to ``~/.duckdb/extensions/`` because
tacoreader runs ``INSTALL spatial; LOAD spatial`` itself (offline, INSTALL
fails and only a present extension loads).

Run ``.venv/bin/python bench/bench_read_datasets.py`` to generate all of them
once and print how long it took.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import shutil
import statistics
import tempfile
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import rasterio
import shapely
from rasterio.transform import from_origin

try:
    from bench._common import reference_fields
except ImportError:  # run as a script: python bench/bench_read_datasets.py
    from _common import reference_fields  # type: ignore[no-redef]

CACHE = Path(tempfile.gettempdir()) / "taco_gdal_bench_read"
START = np.datetime64("2020-01-01T00:00:00", "us")
SPAN_US = 3 * 365 * 86_400 * 1_000_000
PIXELS = 16


def prepare_tacoreader() -> Path:
    """Put the spatial extension where tacoreader's ``LOAD spatial`` finds it."""
    import duckdb
    import duckdb_extension_spatial

    version = f"v{duckdb.__version__}"
    source = (
        Path(duckdb_extension_spatial.__file__).parent
        / "extensions"
        / version
        / "spatial.duckdb_extension"
    )
    target = Path.home() / ".duckdb" / "extensions" / version / "linux_amd64" / source.name
    if not target.exists() or target.stat().st_size != source.stat().st_size:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    return target


def tiny_tif(path: Path, index: int) -> Path:
    """A 16 x 16 uint8 GeoTIFF (about 600 bytes)."""
    profile = {
        "driver": "GTiff",
        "width": PIXELS,
        "height": PIXELS,
        "count": 1,
        "dtype": "uint8",
        "crs": "EPSG:4326",
        "transform": from_origin(-3.7 + 0.01 * index, 40.4, 0.001, 0.001),
    }
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(np.full((1, PIXELS, PIXELS), index % 256, dtype=np.uint8))
    return path


def make_10k(n: int = 10_000) -> Path:
    """The 10,000-sample ZIP of benchmark (a), written by tacotoolbox (cached)."""
    target = CACHE / f"bench{n}.tacozip"
    if target.exists():
        return target
    import tacotoolbox
    from tacotoolbox.datamodel import Sample, Taco, Tortilla

    source = CACHE / f"src{n}"
    source.mkdir(parents=True, exist_ok=True)
    samples = []
    for i in range(n):
        sample = Sample(id=f"s{i:05d}", path=tiny_tif(source / f"s{i:05d}.tif", i))
        sample.extend_with(reference_fields(i))
        samples.append(sample)
    taco = Taco(
        tortilla=Tortilla(samples=samples),
        id="bench10k",
        dataset_version="1.0.0",
        description="reader benchmark (a)",
        licenses=["CC-BY-4.0"],
        providers=[{"name": "bench"}],
        tasks=["classification"],
    )
    partial = target.with_suffix(".partial.tacozip")
    partial.unlink(missing_ok=True)
    tacotoolbox.create(taco, partial, split_size=None)
    partial.rename(target)
    shutil.rmtree(source)
    return target


@dataclass(frozen=True)
class Level:
    """One level of a metadata-only dataset: its row count, children per parent, geometry."""

    rows: int
    children: int
    ids: Sequence[str] | None = None
    geometry: bool = True


def _points(rng: np.random.Generator, n: int) -> pa.Array:
    x = rng.uniform(-180, 180, n)
    y = rng.uniform(-85, 85, n)
    return pa.array(shapely.to_wkb(shapely.points(x, y)), pa.binary())


def _level_table(
    rng: np.random.Generator,
    level: int,
    spec: Level,
    last: bool,
    blobs: Sequence[tuple[int, int]],
    meta: tuple[int, int],
) -> pa.Table:
    n = spec.rows
    ids: Any
    if spec.ids is None:
        ids = pa.array([f"r{i:07d}" for i in range(n)])
    else:
        names = pa.array(list(spec.ids))
        ids = names.take(pa.array(np.tile(np.arange(len(spec.ids)), n // len(spec.ids))))
    columns: dict[str, Any] = {
        "id": ids,
        "type": pa.array(np.full(n, "FILE" if last else "FOLDER", dtype=object), pa.string()),
        "cloud_cover": pa.array(rng.uniform(0, 100, n)),
    }
    if spec.geometry:
        columns["stac:centroid"] = _points(rng, n)
        times = START + rng.integers(0, SPAN_US, n).astype("timedelta64[us]")
        columns["stac:time_start"] = pa.array(times, pa.timestamp("us"))
    current = np.arange(n, dtype=np.int64)
    columns["internal:current_id"] = pa.array(current)
    parent = current if level == 0 else current // spec.children
    columns["internal:parent_id"] = pa.array(parent)
    if last:
        pick = current % len(blobs)
        columns["internal:offset"] = pa.array(np.array([b[0] for b in blobs])[pick])
        columns["internal:size"] = pa.array(np.array([b[1] for b in blobs])[pick])
    else:
        columns["internal:offset"] = pa.array(np.full(n, meta[0], dtype=np.int64))
        columns["internal:size"] = pa.array(np.full(n, meta[1], dtype=np.int64))
    return pa.table(columns)


def _collection(levels: Sequence[Level], tables: Sequence[pa.Table]) -> dict[str, Any]:
    hierarchy: dict[str, Any] = {}
    for depth in range(1, len(levels)):
        spec = levels[depth]
        assert spec.ids is not None
        kind = "FILE" if depth == len(levels) - 1 else "FOLDER"
        parents = 1 if depth == 1 else len(levels[depth - 1].ids or [])
        pattern = {"n": spec.rows, "type": [kind] * len(spec.ids), "id": list(spec.ids)}
        hierarchy[str(depth)] = [dict(pattern) for _ in range(parents)]
    field_schema = {
        f"level{k}": [[f.name, str(f.type).lower(), ""] for f in t.schema]
        for k, t in enumerate(tables)
    }
    return {
        "id": "bench_metadata",
        "dataset_version": "1.0.0",
        "description": "metadata-only reader benchmark",
        "licenses": ["CC-BY-4.0"],
        "providers": [{"name": "bench", "roles": None, "url": None, "links": None}],
        "tasks": ["classification"],
        "taco_version": "2.0.0",
        "title": None,
        "curators": None,
        "keywords": None,
        "extent": {
            "spatial": [-180, -85, 180, 85],
            "temporal": ["2020-01-01T00:00:00Z", "2023-01-01T00:00:00Z"],
        },
        "taco:pit_schema": {
            "root": {"n": levels[0].rows, "type": "FILE" if len(levels) == 1 else "FOLDER"},
            "hierarchy": hierarchy,
        },
        "taco:field_schema": field_schema,
    }


def _data_offsets(path: Path, names: Sequence[str]) -> list[tuple[int, int]]:
    with zipfile.ZipFile(path) as archive:
        out = []
        for name in names:
            info = archive.getinfo(name)
            out.append(
                (info.header_offset + 30 + len(name.encode()) + len(info.extra), info.file_size)
            )
    return out


def make_metadata_zip(name: str, levels: Sequence[Level], seed: int = 0) -> Path:
    """A metadata-only TACO ZIP (cached): rows share a few tiny GeoTIFF members."""
    import tacozip

    target = CACHE / f"{name}.tacozip"
    if target.exists():
        return target
    work = CACHE / f"{name}.work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    tifs = [tiny_tif(work / f"t{i:02d}.tif", i) for i in range(16)]
    meta = work / "__meta__"
    pq.write_table(pa.table({"id": ["x"], "type": ["FILE"]}), meta)
    data_names = [f"DATA/t{i:02d}.tif" for i in range(16)] + ["DATA/shared/__meta__"]
    # pass 1: the DATA members alone give their offsets (later members do not move them)
    probe = work / "probe.tacozip"
    tacozip.create(str(probe), [*tifs, meta], data_names, [(0, 0), (0, 0)])
    offsets = _data_offsets(probe, data_names)
    rng = np.random.default_rng(seed)
    tables = [
        _level_table(rng, k, spec, k == len(levels) - 1, offsets[:16], offsets[16])
        for k, spec in enumerate(levels)
    ]
    files = []
    for k, table in enumerate(tables):
        path = work / f"level{k}.parquet"
        pq.write_table(table, path, compression="zstd", row_group_size=65_536)
        files.append(path)
    collection = work / "COLLECTION.json"
    collection.write_text(json.dumps(_collection(levels, tables), indent=4))
    meta_names = [f"METADATA/level{k}.parquet" for k in range(len(tables))] + ["COLLECTION.json"]
    partial = work / "out.tacozip"
    entries = [(0, 0)] * len(meta_names)
    tacozip.create(
        str(partial), [*tifs, meta, *files, collection], [*data_names, *meta_names], entries
    )
    assert _data_offsets(partial, data_names) == offsets
    tacozip.update_header(str(partial), _data_offsets(partial, meta_names))
    partial.rename(target)
    shutil.rmtree(work)
    return target


MILLION = [Level(1_000_000, 1)]
CASCADE = [
    Level(100_000, 1, geometry=False),
    Level(400_000, 4, ids=("q0", "q1", "q2", "q3"), geometry=False),
    Level(1_200_000, 3, ids=("b0", "b1", "b2")),
]


RESULTS = Path(__file__).resolve().parent / "results"


def measure(fn: Callable[[], Any], repeat: int) -> tuple[float, list[float], Any]:
    """Median seconds of ``repeat`` calls (after one warm-up call), all timings, last result."""
    result = fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), times, result


def compare_readers(
    name: str,
    levels: Sequence[Level],
    run: Callable[[Any, Path, int], dict[str, Any]],
    repeat: int,
) -> tuple[Path, float, dict[str, dict[str, Any]]]:
    """``run(reader_module, path, repeat)`` for taco_gdal then tacoreader on one metadata ZIP.

    Returns the ZIP (generated or cached), the seconds that took, and each reader's run.
    """
    import tacoreader

    import taco_gdal.read

    prepare_tacoreader()
    start = time.perf_counter()
    path = make_metadata_zip(name, levels)
    generated = time.perf_counter() - start
    runs = {
        "taco_gdal": run(taco_gdal.read, path, repeat),
        "tacoreader": run(tacoreader, path, repeat),
    }
    return path, generated, runs


def machine() -> dict[str, Any]:
    """What the figures were measured on (the load average matters on a shared machine)."""
    import duckdb
    import pyarrow
    from osgeo import gdal

    return {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_average": [round(v, 2) for v in os.getloadavg()],
        "gdal": gdal.__version__,
        "duckdb": duckdb.__version__,
        "pyarrow": pyarrow.__version__,
        "tacoreader": importlib.metadata.version("tacoreader"),
    }


def write_results(name: str, results: dict[str, Any]) -> Path:
    """``bench/results/<name>.json``."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(results, indent=2, default=str) + "\n")
    return path


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"


def main() -> None:
    """Generate every benchmark dataset and report the time each took."""
    for label, make in (
        ("10k (tacotoolbox)", make_10k),
        ("1M level 0", lambda: make_metadata_zip("million", MILLION)),
        ("cascade 100k/400k/1.2M", lambda: make_metadata_zip("cascade", CASCADE)),
    ):
        start = time.perf_counter()
        path = make()
        size = path.stat().st_size / 1e6
        print(f"{label:<26} {time.perf_counter() - start:6.1f} s  {path} ({size:.1f} MB)")


if __name__ == "__main__":
    main()
