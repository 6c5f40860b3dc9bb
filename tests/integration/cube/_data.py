"""Datasets for the cube tests, written with rasterio and taco_gdal.create.

* :func:`write_mixed`: nine 2-band uint16 GeoTIFFs (96 x 96, ~37 KB each, nodata 0)
  over one area near 3 W 40 N, in three CRSs (UTM 30N, EPSG:4326, UTM 31N) on three
  dates.  On each date the UTM 30N and EPSG:4326 scenes share a timestamp and the
  UTM 31N scene comes five minutes later (same solar day).  Each scene has a band of
  nodata columns in a different place, so a mosaic shows which scene won.
* :func:`write_series`: five scenes on one UTM grid at five dates (a time series), of
  chosen pixel types and nodata.
* :func:`write_nested`: FOLDERs ``site0..`` with children ``img`` (2 bands, 96 px)
  and ``mask`` (1 band, 48 px).
* :func:`write_columns`: ``n`` FILE samples declared as columns, all one tiny
  GeoTIFF, for the cost of building a cube over many samples.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa
import rasterio
from pyproj import Transformer
from rasterio.transform import from_origin

from taco_gdal.extensions import ISTAC, STAC
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.rasters import samples_from_rasters
from taco_gdal.write import create

PIXELS = 96
BANDS = 2
NODATA = 0
START = datetime(2024, 5, 2, 10, 30)
LON, LAT = -3.05, 40.05  # north-west corner of every scene


@dataclass(frozen=True)
class Scene:
    stem: str
    crs: str
    pixel: float
    time: datetime
    nodata_cols: slice


def mixed_scenes() -> list[Scene]:
    """Nine scenes: three dates x (UTM 30N, EPSG:4326 at the same time, UTM 31N later)."""
    scenes = []
    for day in range(3):
        when = START + timedelta(days=10 * day)
        scenes += [
            Scene(f"d{day}_utm30", "EPSG:32630", 100.0, when, slice(0, 30 + 10 * day)),
            Scene(f"d{day}_geo", "EPSG:4326", 0.00115, when, slice(60, 96)),
            Scene(f"d{day}_utm31", "EPSG:32631", 100.0, when + timedelta(minutes=5), slice(40, 50)),
        ]
    return scenes


def write_scene(
    folder: Path, scene: Scene, seed: int, pixels: int = PIXELS, bands: int = BANDS,
    dtype: str = "uint16", nodata: float = NODATA,
) -> Path:  # fmt: skip
    west, north = Transformer.from_crs("EPSG:4326", scene.crs, always_xy=True).transform(LON, LAT)
    rng = np.random.default_rng(seed)
    top = 200 if dtype == "uint8" else 5000
    data = rng.integers(1, top, size=(bands, pixels, pixels)).astype(dtype)
    data[:, :, scene.nodata_cols] = nodata
    path = folder / f"{scene.stem}.tif"
    profile = {
        "driver": "GTiff", "width": pixels, "height": pixels, "count": bands, "dtype": dtype,
        "crs": scene.crs, "transform": from_origin(west, north, scene.pixel, scene.pixel),
        "nodata": nodata,
    }  # fmt: skip
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(data)
        dst.update_tags(TIFFTAG_DATETIME=scene.time.strftime("%Y:%m:%d %H:%M:%S"))
    return path


def _taco(tortilla: Tortilla, name: str) -> Taco:
    return Taco(
        tortilla,
        id=name,
        dataset_version="1.0.0",
        description=f"cube test dataset {name}",
        licenses=["CC-BY-4.0"],
        providers=[{"name": "taco_gdal tests"}],
        tasks=["classification"],
    )


def write_mixed(folder: Path, extra: list[Scene] | None = None, pixel_type: bool = True) -> Path:
    """Without ``pixel_type``: samples with the STAC and ISTAC extensions only, as other
    tools write them (no ``taco_gdal:data_type`` / ``taco_gdal:nodata``)."""
    src = folder / "src"
    src.mkdir(parents=True, exist_ok=True)
    paths = [write_scene(src, s, i) for i, s in enumerate(mixed_scenes())]
    for k, scene in enumerate(extra or []):  # a different shape: 1 band, 48 px
        paths.append(write_scene(src, scene, 100 + k, pixels=48, bands=1))
    samples = (
        samples_from_rasters(paths)
        if pixel_type
        else [
            Sample(p.stem, p).extend_with(STAC.from_raster(p)).extend_with(ISTAC.from_raster(p))
            for p in paths
        ]
    )
    return create(_taco(Tortilla(samples), "mixed"), folder / "mixed.tacozip", quiet=True)[0]


def write_series(
    folder: Path, n: int = 5, dtypes: tuple[str, ...] = ("uint16",), nodata: float = NODATA
) -> Path:
    """``n`` scenes on one grid; scene ``i`` of type ``dtypes[i % len(dtypes)]``."""
    src = folder / "src"
    src.mkdir(parents=True, exist_ok=True)
    paths = [
        write_scene(src, Scene(f"t{i}", "EPSG:32630", 100.0, START + timedelta(days=5 * i),
                               slice(0, 10)), i, dtype=dtypes[i % len(dtypes)], nodata=nodata)
        for i in range(n)
    ]  # fmt: skip
    samples = samples_from_rasters(paths)
    return create(_taco(Tortilla(samples), "series"), folder / "series.tacozip", quiet=True)[0]


def write_nested(folder: Path, n: int = 3) -> Path:
    src = folder / "src"
    src.mkdir(parents=True, exist_ok=True)
    sites = []
    for i in range(n):
        when = START + timedelta(days=i)
        img = write_scene(src, Scene(f"img{i}", "EPSG:32630", 100.0, when, slice(0, 0)), i)
        mask = write_scene(
            src, Scene(f"mask{i}", "EPSG:32630", 200.0, when, slice(0, 0)), 50 + i, 48, 1
        )
        children = [
            Sample("img", img).extend_with(STAC.from_raster(img)),
            Sample("mask", mask).extend_with(STAC.from_raster(mask)),
        ]
        sites.append(Sample(f"site{i}", Tortilla(children)))
    return create(_taco(Tortilla(sites), "nested"), folder / "nested.tacozip", quiet=True)[0]


def write_columns(folder: Path, n: int) -> Path:
    """``n`` samples declared as columns (one 8 x 8 GeoTIFF), with STAC grid columns."""
    src = folder / "tiny.tif"
    profile = {
        "driver": "GTiff",
        "width": 8,
        "height": 8,
        "count": 1,
        "dtype": "uint8",
        "crs": "EPSG:32630",
        "transform": from_origin(500_000, 4_400_000, 10, 10),
    }
    with rasterio.open(src, "w", **profile) as dst:
        dst.write(np.ones((1, 8, 8), dtype=np.uint8))
    ids = pa.array([f"s{i:07d}" for i in range(n)])
    x0 = 500_000 + 80.0 * (np.arange(n) % 1000)
    y0 = 4_400_000 - 80.0 * (np.arange(n) // 1000)
    transforms = np.column_stack([x0, np.full(n, 10.0), np.zeros(n), y0, np.zeros(n),
                                  np.full(n, -10.0)]).ravel()  # fmt: skip
    start = np.datetime64("2024-01-01T00:00:00", "us")
    metadata = pa.table({
        "stac:crs": pa.array(["EPSG:32630"] * n),
        "stac:tensor_shape": pa.ListArray.from_arrays(
            pa.array(np.arange(0, 3 * n + 1, 3, dtype=np.int32)), pa.array(np.tile([1, 8, 8], n))
        ),
        "stac:geotransform": pa.ListArray.from_arrays(
            pa.array(np.arange(0, 6 * n + 1, 6, dtype=np.int32)), pa.array(transforms)
        ),
        "stac:time_start": pa.array(start + np.arange(n).astype("timedelta64[m]")),
    })  # fmt: skip
    tortilla = Tortilla.from_columns(ids, pa.array([str(src)] * n), metadata)
    return create(_taco(tortilla, "columns"), folder / "columns.tacozip", quiet=True)[0]
