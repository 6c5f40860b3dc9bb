"""Lazy datacubes: ``to_xarray`` against ``odc.stac.load`` and ``stackstac.stack``.

Two measurements, in one process, on the same samples:

* **graph build** at 10k and 100k samples (``--sizes``): the time ``to_xarray()``
  takes to return (the stack, and ``like=GeoBox`` on a common grid) against
  ``odc.stac.load(items, ..., chunks={})`` and ``stackstac.stack(items, ...)`` over
  pystac Items built here from the same metadata (their construction is timed
  apart: the STAC export is not part of this benchmark), plus each graph's task
  count.  The samples are 8 x 8 pixels: only metadata matters here.
* **throughput** on a common grid: ``--grid-samples`` uint16 scenes (16, 64 and
  256 by default) of ``--scene-px`` pixels a side (256 and 1024; the same ground
  footprint), in two UTM zones, 16 per date: output Mpix/s of computing the same
  grid with each tool (threaded scheduler, nearest resampling, grouped by time).

Each figure is the median of ``--repeat`` runs after a warm-up (throughput runs take
turns, and the worst run is kept beside the median).  Run
``python -m bench.bench_xarray`` (quiet machine); writes
``bench/results/bench_xarray.json``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import rasterio
from rasterio.transform import from_origin

import taco_gdal
from taco_gdal.model import Taco, Tortilla

try:
    from bench._common import write_json
except ImportError:  # run as a script
    from _common import write_json  # type: ignore[no-redef]

START = datetime(2024, 1, 1, 10, 30)


def _taco(tortilla: Tortilla, name: str) -> Taco:
    return Taco(
        tortilla,
        id=name,
        dataset_version="1.0.0",
        description="bench_xarray",
        licenses=["CC0-1.0"],
        providers=[{"name": "bench"}],
        tasks=["classification"],
    )


def _write_tif(
    path: Path, crs: str, west: float, north: float, pixel: float, size: int, seed: int
) -> None:
    data = np.random.default_rng(seed).integers(1, 4000, (1, size, size), dtype=np.uint16)
    profile = {
        "driver": "GTiff",
        "width": size,
        "height": size,
        "count": 1,
        "dtype": "uint16",
        "crs": crs,
        "transform": from_origin(west, north, pixel, pixel),
        "nodata": 0,
        "tiled": True,
        "blockxsize": 256,
        "blockysize": 256,
    }
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(data)


def _list_column(values: np.ndarray, width: int) -> pa.Array:
    offsets = pa.array(np.arange(0, width * (len(values) // width) + 1, width, dtype=np.int32))
    return pa.ListArray.from_arrays(offsets, pa.array(values))


def make_dataset(
    folder: Path,
    crs: list[str],
    west: np.ndarray,
    north: np.ndarray,
    pixel: float,
    size: int,
    times: np.ndarray,
    files: list[Path],
    name: str,
) -> Path:
    """``len(west)`` samples (sample ``i`` is ``files[i % len(files)]``) with STAC columns."""
    n = len(west)
    transforms = np.column_stack(
        [west, np.full(n, pixel), np.zeros(n), north, np.zeros(n), np.full(n, -pixel)]
    ).ravel()
    metadata = pa.table(
        {
            "stac:crs": pa.array(crs),
            "stac:tensor_shape": _list_column(np.tile([1, size, size], n), 3),
            "stac:geotransform": _list_column(transforms, 6),
            "stac:time_start": pa.array(times.astype("datetime64[us]")),
        }
    )
    ids = pa.array([f"s{i:07d}" for i in range(n)])
    paths = pa.array([str(files[i % len(files)]) for i in range(n)])
    tortilla = Tortilla.from_columns(ids, paths, metadata)
    return taco_gdal.create(_taco(tortilla, name), folder / f"{name}.tacozip", quiet=True)[0]


def stac_items(ds: taco_gdal.TacoDataset) -> list[Any]:
    """Minimal pystac Items (projection extension, one ``data`` asset: the sample's GDAL path)."""
    import pystac

    out = []
    table = ds.to_arrow(0)
    crs = table.column("stac:crs").to_pylist()
    shapes = table.column("stac:tensor_shape").to_pylist()
    gts = table.column("stac:geotransform").to_pylist()
    times = table.column("stac:time_start").to_pylist()
    paths = table.column("internal:gdal_vsi").to_pylist()
    ids = table.column("id").to_pylist()
    lonlat = _lonlat_boxes(crs, gts, shapes)
    for k in range(table.num_rows):
        x0, dx, _, y0, _, dy = gts[k]
        _, h, w = shapes[k]
        west, south, east, north = lonlat[k]
        footprint = {
            "type": "Polygon",
            "coordinates": [
                [[west, south], [east, south], [east, north], [west, north], [west, south]]
            ],
        }
        item = pystac.Item(ids[k], footprint, [west, south, east, north], times[k], {})
        item.properties.update(
            {
                "proj:code": crs[k],
                "proj:shape": [h, w],
                "proj:transform": [dx, 0.0, x0, 0.0, dy, y0],
                "proj:bbox": [x0, y0 + dy * h, x0 + dx * w, y0],
            }
        )
        item.add_asset(
            "data", pystac.Asset(paths[k], media_type=pystac.MediaType.GEOTIFF, roles=["data"])
        )
        out.append(item)
    return out


def _lonlat_boxes(crs: list[str], gts: list[list[float]], shapes: list[list[int]]) -> np.ndarray:
    """Each sample's lon/lat bounding box (corners transformed, one transformer per CRS)."""
    from pyproj import Transformer

    t = np.asarray(gts, dtype=float)
    s = np.asarray(shapes, dtype=float)
    xs = np.stack([t[:, 0], t[:, 0] + t[:, 1] * s[:, 2]] * 2, axis=1)
    ys = np.stack([t[:, 3]] * 2 + [t[:, 3] + t[:, 5] * s[:, 1]] * 2, axis=1)
    lon, lat = np.empty_like(xs), np.empty_like(ys)
    codes = np.asarray(crs)
    for code in np.unique(codes):
        mask = codes == code
        transformer = Transformer.from_crs(str(code), "EPSG:4326", always_xy=True)
        lon[mask], lat[mask] = transformer.transform(xs[mask], ys[mask])
    return np.column_stack([lon.min(1), lat.min(1), lon.max(1), lat.max(1)])


def _median(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    result = fn()  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def _interleaved(runs: dict[str, Callable[[], Any]], repeat: int) -> dict[str, tuple[float, float]]:
    """Median and worst seconds of each run, the runs taking turns (a warm-up first)."""
    for fn in runs.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, fn in runs.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: (statistics.median(t), max(t)) for name, t in times.items()}


def _tasks(obj: Any) -> int:
    data = obj.data if hasattr(obj, "data") else obj
    if hasattr(obj, "data_vars"):
        data = next(iter(obj.data_vars.values())).data
    return len(data.__dask_graph__())


def graph_build(folder: Path, n: int, repeat: int) -> dict[str, Any]:
    import odc.stac
    import stackstac
    from odc.geo.geobox import GeoBox

    tiny = folder / "tiny.tif"
    _write_tif(tiny, "EPSG:32630", 500_000, 4_400_000, 10, 8, 0)
    k = np.arange(n)
    path = make_dataset(
        folder,
        ["EPSG:32630"] * n,
        500_000 + 80.0 * (k % 1000),
        4_400_000 - 80.0 * (k // 1000),
        10.0,
        8,
        np.datetime64(START) + (k // 1000).astype("timedelta64[D]"),
        [tiny],
        f"tiny{n}",
    )
    ds = taco_gdal.load(path)
    box = GeoBox.from_bbox(
        (500_000, 4_400_000 - 80 * (n // 1000 + 1), 580_000, 4_400_000), "EPSG:32630", resolution=20
    )
    start = time.perf_counter()
    items = stac_items(ds)
    items_s = time.perf_counter() - start
    out: dict[str, Any] = {"samples": n, "pystac_items_s": items_s}
    runs = {
        "taco_stack": lambda: ds.to_xarray(dtype="uint16"),
        "taco_grid": lambda: ds.to_xarray(like=box, dtype="uint16"),
        "odc_stac_load": lambda: odc.stac.load(
            items, bands=["data"], geobox=box, chunks={}, dtype="uint16", groupby="time"
        ),
        "stackstac_stack": lambda: stackstac.stack(
            items,
            assets=["data"],
            epsg=32630,
            resolution=20,
            bounds=tuple(box.extent.boundingbox),
            dtype="uint16",
            fill_value=np.uint16(0),
            rescale=False,
        ),
    }
    for name, fn in runs.items():
        seconds, result = _median(fn, repeat)
        out[name] = {"build_s": seconds, "tasks": _tasks(result)}
        print(f"{n:>7} samples  {name:<16} {seconds * 1000:9.1f} ms  {out[name]['tasks']} tasks")
    return out


def throughput(folder: Path, n: int, repeat: int, size: int = 256) -> dict[str, Any]:
    import dask
    import odc.stac
    import stackstac
    from odc.geo.geobox import GeoBox
    from pyproj import Transformer

    pixel = 20.0 * 256 / size  # the same ground footprint at every scene size
    files, crs, west, north = [], [], [], []
    to31 = Transformer.from_crs("EPSG:32630", "EPSG:32631", always_xy=True)
    for i in range(n):
        x, y = 495_000 + 3_000.0 * (i % 4), 4_430_000 - 3_000.0 * ((i // 4) % 4)
        zone = "EPSG:32630" if i % 2 == 0 else "EPSG:32631"
        if zone == "EPSG:32631":
            x, y = to31.transform(x, y)
        tif = folder / f"scene{i:04d}.tif"
        _write_tif(tif, zone, x, y, pixel, size, i)
        files.append(tif)
        crs.append(zone)
        west.append(x)
        north.append(y)
    times = np.datetime64(START) + (np.arange(n) // 16).astype("timedelta64[D]")
    path = make_dataset(
        folder, crs, np.array(west), np.array(north), pixel, size, times, files, f"scenes{n}"
    )
    ds = taco_gdal.load(path)
    box = GeoBox.from_bbox(
        (
            495_000,
            4_430_000 - 3_000 * 3 - size * pixel,
            495_000 + 3_000 * 3 + size * pixel,
            4_430_000,
        ),
        "EPSG:32630",
        resolution=pixel,
    )
    items = stac_items(ds)
    slots = len(np.unique(times))
    mpix = slots * box.shape.x * box.shape.y / 1e6
    out: dict[str, Any] = {"samples": n, "scene_px": size, "slots": slots, "output_mpix": mpix}
    runs = {
        "taco_grid": lambda: ds.to_xarray(like=box).compute(),
        "odc_stac_load": lambda: odc.stac.load(
            items, bands=["data"], geobox=box, chunks={}, groupby="time"
        ).data.compute(),
        "stackstac_stack": lambda: stackstac.stack(
            items,
            assets=["data"],
            epsg=32630,
            resolution=pixel,
            bounds=tuple(box.extent.boundingbox),
            dtype="uint16",
            fill_value=np.uint16(0),
            rescale=False,
        ).compute(),
    }
    with dask.config.set(scheduler="threads"):
        timed = _interleaved(runs, repeat)
    for name, (seconds, worst) in timed.items():
        out[name] = {"compute_s": seconds, "worst_s": worst, "mpix_per_s": mpix / seconds}
        print(
            f"{n:>5} scenes of {size} px  {name:<16} {mpix / seconds:9.1f} Mpix/s "
            f"(median {seconds:.2f} s, worst {worst:.2f} s)"
        )
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--grid-samples", type=int, nargs="+", default=[16, 64, 256])
    parser.add_argument("--scene-px", type=int, nargs="+", default=[256, 1024])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("bench/results/bench_xarray.json"))
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"graph_build": [], "throughput": []}
    with tempfile.TemporaryDirectory(prefix="bench_xarray_") as tmp:
        for n in args.sizes:
            folder = Path(tmp) / f"g{n}"
            folder.mkdir()
            results["graph_build"].append(graph_build(folder, n, args.repeat))
        for size in args.scene_px:
            for n in args.grid_samples:
                folder = Path(tmp) / f"grid{n}_{size}"
                folder.mkdir()
                results["throughput"].append(throughput(folder, n, args.repeat, size))
    write_json(args.out, results)


if __name__ == "__main__":
    main()
