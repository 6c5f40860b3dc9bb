"""``check_splits`` at scale: a grid of touching tiles with a random split.

One TACO ZIP per size (``--sizes``, default 10k and 100k level-0 samples): a
square grid of ``--tile-m`` UTM tiles (``istac:geometry`` in EPSG:32630, every
tile touching its neighbours), the split drawn at random per tile, every sample
the same tiny GeoTIFF (its digests would all repeat, so none are stored). Per
size and buffer (``--buffers``, metres), after one warm-up: the wall time of
``check_splits`` on a freshly loaded dataset (footprints included) and the
number of pairs found. With buffer 0 the touching tiles do not leak (0 pairs);
with a buffer every neighbour pair of different splits does, which is the worst
case for the exact test. Run::

    flock /tmp/taco_bench.lock .venv/bin/python -m bench.bench_check_splits \\
        [--sizes 10000 100000] [--buffers 0 100] [--rounds 3]

writes ``bench/results/bench_check_splits.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import shapely

import taco_gdal
from taco_gdal.model import Taco, Tortilla

RESULTS = Path(__file__).parent / "results"


def write_grid(folder: Path, size: int, tile_m: float) -> Path:
    """A ZIP of ``size`` samples on a square grid of touching ``tile_m`` tiles."""
    import rasterio
    from rasterio.transform import from_origin

    tif = folder / "tiny.tif"
    profile = {"driver": "GTiff", "width": 4, "height": 4, "count": 1, "dtype": "uint8"}
    with rasterio.open(
        tif, "w", **profile, crs="EPSG:32630", transform=from_origin(400_000, 4_000_000, 1, 1)
    ):
        pass
    side = int(np.ceil(np.sqrt(size)))
    col, row = np.arange(size) % side, np.arange(size) // side
    x, y = 400_000 + col * tile_m, 4_000_000 + row * tile_m
    boxes = shapely.to_wkb(shapely.box(x, y, x + tile_m, y + tile_m))
    splits = np.random.default_rng(0).choice(["train", "val", "test"], size, p=[0.8, 0.1, 0.1])
    metadata = pa.table(
        {
            "split": splits,
            "istac:crs": pa.array(["EPSG:32630"] * size),
            "istac:geometry": pa.array(list(boxes), pa.binary()),
        }
    )
    ids = [f"t{i:07d}" for i in range(size)]
    tortilla = Tortilla.from_columns(ids, [str(tif)] * size, metadata)
    taco = Taco(
        tortilla,
        id=f"grid{size}",
        dataset_version="1.0.0",
        description="check_splits benchmark grid",
        licenses=["CC0-1.0"],
        providers=[{"name": "bench"}],
        tasks=["segmentation"],
    )
    return taco_gdal.create(taco, folder / f"grid{size}.tacozip", quiet=True)[0]


def measure(path: Path, buffer_m: float, rounds: int) -> dict[str, Any]:
    taco_gdal.check_splits(taco_gdal.load(str(path)), buffer_m=buffer_m)  # warm-up
    times, found = [], 0
    for _ in range(rounds):
        ds = taco_gdal.load(str(path))
        start = time.perf_counter()
        report = taco_gdal.check_splits(ds, buffer_m=buffer_m)
        times.append(time.perf_counter() - start)
        found = len(report.overlaps)
    return {"median_s": statistics.median(times), "worst_s": max(times), "pairs": found}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--buffers", type=float, nargs="+", default=[0.0, 100.0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tile-m", type=float, default=512.0)
    args = parser.parse_args()
    results: dict[str, Any] = {"load_average": os.getloadavg(), "runs": []}
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            path = write_grid(Path(tmp), size, args.tile_m)
            for buffer_m in args.buffers:
                row = {
                    "samples": size,
                    "buffer_m": buffer_m,
                    **measure(path, buffer_m, args.rounds),
                }
                results["runs"].append(row)
                print(json.dumps(row))
    results["load_average_after"] = os.getloadavg()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_check_splits.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
