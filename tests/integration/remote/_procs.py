"""What worker processes run in the many-process tests (importable by spawned children).

Workers get the GDAL options that reach the test server (thread-local options
are not inherited by spawned processes) and, through the pool initializer,
a dataset: inherited as-is under ``fork``, pickled under ``spawn`` and
``forkserver``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import rasterio

import taco_gdal
from taco_gdal import Env
from taco_gdal.io.sample import open_sample
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.read import TacoDataFrame, TacoDataset
from taco_gdal.write import create
from tests.support.blob import geotiff_bytes

_state: dict[str, Any] = {}


def init(dataset: TacoDataset | None, options: dict[str, str]) -> None:
    """Pool initializer: keep the dataset and the options for the tasks."""
    _state["dataset"] = dataset
    _state["options"] = options


def read(job: tuple[str, str]) -> np.ndarray:
    """Read one sample: ``open_sample``, or a plain ``rasterio.open`` inside ``Env()``."""
    path, how = job
    with Env(read_profile=False, **_state["options"]):
        if how == "open_sample":
            with open_sample(path) as src:
                return src.read()
        with Env(), rasterio.open(path) as src:
            return src.read()


def query(_: object = None) -> dict[str, Any]:
    """The pool's dataset queried in the worker: filters, sql, levels and a FOLDER read."""
    ds: TacoDataset = _state["dataset"]
    with Env(read_profile=False, **_state["options"]):
        return summary(ds)


def summary(ds: TacoDataset) -> dict[str, Any]:
    """What a filtered dataset gives: rows at every level and a FOLDER's children."""
    out: dict[str, Any] = {
        "levels": [ds.to_arrow(level) for level in range(ds.max_depth + 1)],
        "ids": ds.data["id"].tolist(),
        "repr": repr(ds),
    }
    if ds.max_depth > 0:
        children = ds.read(0)
        assert isinstance(children, TacoDataFrame)
        out["children"] = pa.Table.from_pandas(
            children[["id", "internal:gdal_vsi"]], preserve_index=False
        )
    return out


def flat_dataset(folder: Path, count: int, pixels: int = 32) -> tuple[Path, dict[str, np.ndarray]]:
    """A ZIP of ``count`` small GeoTIFFs ``s000`` ... and their pixels."""
    src = folder / "src"
    src.mkdir(parents=True, exist_ok=True)
    truth: dict[str, np.ndarray] = {}
    samples = []
    for i in range(count):
        data, pixels_array = geotiff_bytes(1000 + i, pixels=pixels, bands=2)
        path = src / f"s{i:03d}.tif"
        path.write_bytes(data)
        truth[f"s{i:03d}"] = pixels_array
        samples.append(Sample(f"s{i:03d}", path, score=float(i)))
    taco = Taco(
        Tortilla(samples),
        id="procs",
        dataset_version="1.0.0",
        description="many-process test dataset",
        licenses=["CC-BY-4.0"],
        providers=[{"name": "taco_gdal tests"}],
        tasks=["classification"],
    )
    return create(taco, folder / "procs.tacozip", quiet=True)[0], truth


def loaded(url: str) -> TacoDataset:
    return taco_gdal.load(url)
