"""Benchmark: what KLL sketches cost when writing statistics, and what ``ds.stats`` costs.

Part 1, write path.  ``--rasters`` GeoTIFFs (``--pixels`` square, 4 uint16 bands,
nodata 0 on part of them) get ``GeotiffStats(sketch=False)`` and ``GeotiffStats()``
in turn, ``--rounds`` interleaved rounds after a warm-up, the order alternating;
reported: median and worst seconds per raster of each, and their ratio.

Part 2, read path.  The sketched rasters are written to one ZIP; ``stats(q=())``
(moments only), ``stats(q=(2, 98))`` (plus the merge of every sample's sketches)
and the float32 fallback of the same view without sketches are timed on the whole
dataset, median and worst of the rounds.

Run: ``python -m bench.bench_stats [--rasters 200] [--pixels 512] [--rounds 5]
[--output FILE]``; prints the figures and writes ``bench/results/stats.json``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import rasterio
from rasterio.transform import from_origin

import taco_gdal
from bench._common import write_json
from taco_gdal.extensions import GeotiffStats
from taco_gdal.model import Sample, Taco, Tortilla

RESULTS = Path(__file__).resolve().parent / "results" / "stats.json"


def _rasters(folder: Path, count: int, pixels: int) -> list[Path]:
    rng = np.random.default_rng(0)
    paths = []
    for i in range(count):
        data = rng.gamma(2.0, 500 + 50 * i, (4, pixels, pixels)).clip(1, 60000).astype(np.uint16)
        data[:, : pixels // 10] = 0
        path = folder / f"r{i:04d}.tif"
        profile = {"driver": "GTiff", "width": pixels, "height": pixels, "count": 4}
        profile |= {"dtype": "uint16", "nodata": 0, "crs": "EPSG:4326"}
        profile["transform"] = from_origin(-3.7 + 0.01 * i, 40.4, 1e-5, 1e-5)
        with rasterio.open(path, "w", **profile) as dst:
            dst.write(data)
        paths.append(path)
    return paths


def _samples(paths: list[Path], extension: GeotiffStats) -> list[Sample]:
    return [Sample(p.stem, str(p)).extend_with(extension) for p in paths]


def _timed(run: Callable[[], Any]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def _summary(times: list[float], per: int = 1) -> dict[str, float]:
    return {"median_s": statistics.median(times) / per, "worst_s": max(times) / per}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rasters", type=int, default=200)
    parser.add_argument("--pixels", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        paths = _rasters(root, args.rasters, args.pixels)
        variants = [("plain", GeotiffStats(sketch=False)), ("sketched", GeotiffStats())]
        for _, ext in variants:  # warm-up: imports, page cache
            _samples(paths[:2], ext)
        writes: dict[str, list[float]] = {"plain": [], "sketched": []}
        for round_ in range(args.rounds):
            for name, ext in variants[round_ % 2 :] + variants[: round_ % 2]:
                writes[name].append(_timed(lambda ext=ext: _samples(paths, ext)))
        results: dict[str, Any] = {
            "rasters": args.rasters,
            "pixels": args.pixels,
            "bands": 4,
            "write_per_raster": {k: _summary(v, args.rasters) for k, v in writes.items()},
        }
        for name, ext in (("sketched", GeotiffStats()), ("plain", GeotiffStats(sketch=False))):
            taco = Taco(
                Tortilla(_samples(paths, ext)),
                id=name,
                dataset_version="1.0.0",
                description="stats bench",
                licenses=["CC-BY-4.0"],
                providers=[{"name": "bench"}],
                tasks=["regression"],
            )
            taco_gdal.create(taco, root / f"{name}.tacozip", quiet=True)
        sketched = taco_gdal.load(str(root / "sketched.tacozip"))
        plain = taco_gdal.load(str(root / "plain.tacozip"))
        reads: dict[str, list[float]] = {"moments": [], "percentiles": [], "fallback": []}
        sketched.stats(q=(50,))  # warm-up: DuckDB views
        for _ in range(args.rounds):
            reads["moments"].append(_timed(lambda: sketched.stats(q=())))
            reads["percentiles"].append(_timed(lambda: sketched.stats(q=(2, 98))))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", taco_gdal.TacoApproximationWarning)
                reads["fallback"].append(_timed(lambda: plain.stats(q=(25, 95))))
        results["read_whole_view"] = {k: _summary(v) for k, v in reads.items()}
    plain_s = results["write_per_raster"]["plain"]["median_s"]
    sketched_s = results["write_per_raster"]["sketched"]["median_s"]
    results["write_ratio_sketched_over_plain"] = sketched_s / plain_s
    for section in ("write_per_raster", "read_whole_view"):
        for name, figures in results[section].items():
            print(
                f"{section:>16} {name:>11}: median {figures['median_s'] * 1e3:8.2f} ms, "
                f"worst {figures['worst_s'] * 1e3:8.2f} ms"
            )
    print(f"write ratio sketched/plain: {results['write_ratio_sketched_over_plain']:.2f}")
    write_json(args.output, results)


if __name__ == "__main__":
    main()
