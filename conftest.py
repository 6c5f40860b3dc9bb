"""Docstring examples of ``taco_gdal/`` and ``plugins/`` run in the suite, on real data.

:func:`pytest_collect_file` collects the examples of every module under
``taco_gdal/`` and ``plugins/`` (both in ``testpaths``), as ``--doctest-modules``
would, but not the helper modules of ``tests/`` (scripts for QGIS, examples of
test helpers).  Each example runs in a fresh working folder that holds small
real datasets, built once per session from rasterio GeoTIFFs with
``taco_gdal.create``, under the names the docstrings use:

* ``dataset.tacozip``: a flat ZIP of 4 GeoTIFF samples ``s000`` .. ``s003``
  with STAC metadata, times, ``cloud_cover``, ``split``, ``geotiff:stats``
  and xxh3 digests;
* ``tiles.tacozip``: 3 FOLDERs ``tile000`` .. ``tile002`` with ISTAC footprints
  and times, each holding the GeoTIFFs ``b02``, ``b03``, ``b04`` with STAC;
* ``tiles/``: the same dataset as a FOLDER container;
* ``cat/``: the same dataset split into two ZIPs and consolidated as
  ``cat/.tacocat``;
* ``a.tacozip`` and ``b.tacozip``: two flat datasets with the same schema
  (``id`` ``"a"`` and ``"b"``) for concat and merge examples;
* ``tiles.caf``, ``train.taridx`` (with ``train_0000.tar`` and
  ``train_0001.tar``): the plugin formats;
* ``scenes/``: three tagged GeoTIFFs, a folder of rasters;
* ``old.taco``: a TACO v1 file (a copy of a golden file of tests/generations/);
* ``src/``: the GeoTIFFs every dataset was made of (``src/s000.tif`` ...).

The namespace binds ``taco_gdal``, ``np``, ``rasterio``, ``ds``
(``load("dataset.tacozip")``), ``tdf`` (its ``.data``), ``tiles``
(``load("tiles.tacozip")``), ``taco`` (the flat ``Taco`` model, not yet
written) and ``url`` (``dataset.tacozip`` served by the Range server of
``tests/support/servers/`` on 127.0.0.1).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tarfile
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from _pytest.doctest import DoctestItem, DoctestModule

_ROOT = Path(__file__).parent
_DOCTEST_ROOTS = (_ROOT / "taco_gdal", _ROOT / "plugins")

# PyQGIS exists only inside QGIS (Debian's python3 runs it in tests/qgis/,
# never this venv): the plugin's modules import ``qgis`` at the top, so
# collecting their examples would fail on the import.
collect_ignore = ["plugins/qgis_taco"]
# Module paths kept for old imports (taco_gdal._moved): importing one warns, and the
# modules they stand for are collected at their new paths.
_MOVED = ("dataframe", "filters", "hub", "levels", "navigation", "state", "stats", "timerange")
collect_ignore += ["taco_gdal/read/containers"] + [f"taco_gdal/read/{m}.py" for m in _MOVED]
# Optional extras (pyproject ``torch`` / ``dask``): their examples run when the
# extra is installed (scripts/setup.sh installs both), and are not collected
# in an environment without it rather than failing on the import.
if importlib.util.find_spec("torch") is None:
    collect_ignore.append("taco_gdal/torch")
if importlib.util.find_spec("distributed") is None:
    collect_ignore.append("taco_gdal/write/dask.py")

_START = datetime(2024, 3, 1, 10, 30)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """The examples of a package module (``__main__`` is safe: its code is guarded)."""
    if parent.config.option.doctestmodules:  # --doctest-modules given: pytest collects them
        return None
    if file_path.suffix != ".py" or file_path.name == "conftest.py":
        return None
    if not any(file_path.is_relative_to(root) for root in _DOCTEST_ROOTS):
        return None
    module: pytest.Collector = DoctestModule.from_parent(parent, path=file_path)
    return module


# A TACO v1 file written by tacotoolbox 0.5.2 (tests/generations/golden/README).
_GOLDEN_V1 = Path(__file__).parent / "tests" / "generations" / "golden" / "v1" / "v1_flat.taco"


def _flat_taco(src: Path, dataset_id: str, n: int, first: int = 0) -> Any:
    from taco_gdal.extensions import GeotiffStats
    from taco_gdal.model import Sample, Taco, Tortilla
    from tests.support.datasets import make_geotiff

    samples = []
    for i in range(first, first + n):
        path = src / f"s{i:03d}.tif"
        meta = make_geotiff(path, i)
        meta["stac:time_start"] = _START + timedelta(days=10 * i)
        samples.append(
            Sample(
                f"s{i - first:03d}",
                path,
                cloud_cover=float(5 * i),
                split=("train", "train", "validation", "test")[i % 4],
                **meta,
            ).extend_with(GeotiffStats())
        )
    return Taco(
        Tortilla(samples),
        id=dataset_id,
        dataset_version="1.0.0",
        description=f"Docstring example dataset {dataset_id}",
        licenses=["CC-BY-4.0"],
        providers=[{"name": "taco_gdal doctests"}],
        tasks=["classification"],
    )


def _tiles_taco(src: Path) -> Any:
    import shapely

    from taco_gdal.extensions import ISTAC
    from taco_gdal.model import Sample, Taco, Tortilla
    from tests.support.datasets import make_geotiff

    tiles = []
    for t in range(3):
        bands, boxes = [], []
        for b, band in enumerate(("b02", "b03", "b04")):
            index = 10 + 3 * t + b
            path = src / f"tile{t:03d}_{band}.tif"
            meta = make_geotiff(path, index)
            meta["stac:time_start"] = _START + timedelta(days=30 * t)
            west, _, north = meta["stac:geotransform"][0], 0, meta["stac:geotransform"][3]
            boxes.append(shapely.box(west, north - 0.016, west + 0.016, north))
            bands.append(Sample(band, path, **meta))
        footprint = shapely.to_wkb(shapely.union_all(boxes).envelope)
        tile = Sample(f"tile{t:03d}", Tortilla(bands), split=("train", "test", "train")[t])
        tile.extend_with(ISTAC("EPSG:4326", footprint, _START + timedelta(days=30 * t)))
        tiles.append(tile)
    return Taco(
        Tortilla(tiles),
        id="tiles",
        dataset_version="1.0.0",
        description="Docstring example dataset: 3 tiles of 3 bands",
        licenses=["CC-BY-4.0"],
        providers=[{"name": "taco_gdal doctests"}],
        tasks=["segmentation"],
    )


def _scenes(folder: Path) -> None:
    import numpy as np
    import rasterio
    from rasterio.transform import from_origin

    folder.mkdir()
    for i in range(3):
        profile = {
            "driver": "GTiff", "width": 8, "height": 8, "count": 1, "dtype": "uint8",
            "crs": "EPSG:32630", "transform": from_origin(440000 + 80 * i, 4470000, 10, 10),
        }  # fmt: skip
        with rasterio.open(folder / f"scene{i}.tif", "w", **profile) as dst:
            dst.write(np.full((1, 8, 8), i, dtype=np.uint8))
            dst.update_tags(TIFFTAG_DATETIME=f"2024:0{i + 1}:15 10:00:00")


def _plugins(root: Path, src: Path) -> None:
    from taco_caf import write_caf
    from taco_taridx import write_taridx

    write_caf({f"s{i:03d}.tif": src / f"s{i:03d}.tif" for i in range(3)}, root / "tiles.caf")
    shards = []
    for shard in range(2):
        tar_path = root / f"train_{shard:04d}.tar"
        with tarfile.open(tar_path, "w", format=tarfile.USTAR_FORMAT) as tar:
            for i in range(2):
                key = f"k{2 * shard + i:03d}"
                tar.add(src / f"s{2 * shard + i:03d}.tif", arcname=f"{key}.tif")
        shards.append(tar_path)
    write_taridx(shards, root / "train.taridx")


def _build(root: Path) -> dict[str, Any]:
    import taco_gdal

    src = root / "src"
    src.mkdir(parents=True)
    flat = _flat_taco(src, "dataset", 4)
    taco_gdal.create(flat, root / "dataset.tacozip", quiet=True, checksum="xxh3")
    tiles = _tiles_taco(src)
    taco_gdal.create(tiles, root / "tiles.tacozip", quiet=True)
    taco_gdal.create(tiles, root / "tiles", quiet=True)
    per_tile = tiles.tortilla.samples[0].size
    (root / "cat").mkdir()
    taco_gdal.create(tiles, root / "cat" / "tiles.tacozip", split_size=2 * per_tile, quiet=True)
    taco_gdal.create(_flat_taco(src, "a", 2, first=4), root / "a.tacozip", quiet=True)
    taco_gdal.create(_flat_taco(src, "b", 2, first=6), root / "b.tacozip", quiet=True)
    _scenes(root / "scenes")
    _plugins(root, src)
    shutil.copyfile(_GOLDEN_V1, root / "old.taco")
    return {"taco": _flat_taco(root / "src_model", "dataset", 4)}


@pytest.fixture(scope="session")
def doctest_datasets(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The template folder of example datasets, the Range server over it, and the namespace."""
    import numpy as np
    import rasterio

    import taco_gdal
    from tests.support.servers.range_server import RangeServer

    root = tmp_path_factory.mktemp("doctest-datasets")
    (root / "src_model").mkdir()
    extra = _build(root)
    ds = taco_gdal.load(str(root / "dataset.tacozip"))
    with RangeServer(root=root) as server:
        yield {
            "root": root,
            "namespace": {
                "taco_gdal": taco_gdal,
                "np": np,
                "rasterio": rasterio,
                "ds": ds,
                "tdf": ds.data,
                "tiles": taco_gdal.load(str(root / "tiles.tacozip")),
                "url": f"{server.url}/dataset.tacozip",
                **extra,
            },
        }


@pytest.fixture(autouse=True)
def _doctest_workspace(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """For docstring examples only: a fresh copy of the datasets as the working folder."""
    if not isinstance(request.node, DoctestItem):
        yield
        return
    datasets = request.getfixturevalue("doctest_datasets")
    namespace = request.getfixturevalue("doctest_namespace")
    namespace.update(datasets["namespace"])
    work = tmp_path_factory.mktemp("doctest-work")
    shutil.copytree(datasets["root"], work, dirs_exist_ok=True, symlinks=True)
    previous = os.getcwd()
    os.chdir(work)
    try:
        yield
    finally:
        os.chdir(previous)
        shutil.rmtree(work, ignore_errors=True)  # 0.4 MB a copy, ~280 examples
