"""Benchmark: write 10,000 small GeoTIFFs into one TACO ZIP, taco_gdal vs tacotoolbox 0.26.9.

Both tools get the same files and the same fields as the reference timing
dataset (``cloud_cover`` double, ``split`` string, ``tile`` int64, ``acq``
timestamp): 10,000 FILE samples, each a 16x16 uint8 single-band GeoTIFF.  The
timed call is ``create(taco, "out.tacozip", split_size=None)`` on a freshly
built Taco (object construction is not timed, metadata generation is), repeated
``--repeat`` times per tool in the same run; the best run of each is kept.

Run: ``.venv/bin/python bench/bench_write_10k.py [--samples 10000] [--repeat 3]``;
prints a table and writes ``bench/results/write_10k.json``.  The GeoTIFFs and
outputs live in a temporary folder (``--workdir`` to choose its disk) that is
deleted at the end.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

try:
    from bench._common import reference_fields, write_json
except ImportError:  # run as a script: python bench/bench_write_10k.py
    from _common import reference_fields, write_json  # type: ignore[no-redef]

RESULTS = Path(__file__).resolve().parent / "results" / "write_10k.json"
COLLECTION: dict[str, Any] = {
    "id": "bench10k",
    "dataset_version": "1.0.0",
    "description": "10k small GeoTIFFs",
    "licenses": ["CC-BY-4.0"],
    "providers": [{"name": "bench"}],
    "tasks": ["classification"],
}


def make_tiffs(folder: Path, n: int) -> list[Path]:
    """``n`` 16x16 uint8 GeoTIFFs (EPSG:4326) with distinct pixels."""
    import numpy as np
    import rasterio
    from rasterio.transform import from_origin

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    paths = []
    profile = {"driver": "GTiff", "width": 16, "height": 16, "count": 1, "dtype": "uint8"}
    for i in range(n):
        path = folder / f"img{i:05d}.tif"
        transform = from_origin(-3.7 + i * 1e-3, 40.4, 1e-4, 1e-4)
        with rasterio.open(path, "w", crs="EPSG:4326", transform=transform, **profile) as dst:
            dst.write(rng.integers(0, 255, (1, 16, 16), dtype=np.uint8))
        paths.append(path)
    return paths


def _taco_gdal(paths: list[Path]) -> Any:
    from taco_gdal.model import Sample, Taco, Tortilla

    samples = [Sample(f"s{i:05d}", p, **reference_fields(i)) for i, p in enumerate(paths)]
    return Taco(Tortilla(samples), **COLLECTION)


def _tacotoolbox(paths: list[Path]) -> Any:
    from tacotoolbox.datamodel import Sample, Taco, Tortilla

    samples = [Sample(id=f"s{i:05d}", path=p, **reference_fields(i)) for i, p in enumerate(paths)]
    return Taco(tortilla=Tortilla(samples=samples), **COLLECTION)


def _time_ours(paths: list[Path], out: Path) -> float:
    from taco_gdal.write import create

    taco = _taco_gdal(paths)
    gc.collect()
    started = time.perf_counter()
    create(taco, out, split_size=None, quiet=True)
    return time.perf_counter() - started


def _time_reference(paths: list[Path], out: Path) -> float:
    import tacotoolbox

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        taco = _tacotoolbox(paths)
        gc.collect()
        started = time.perf_counter()
        tacotoolbox.create(taco, out, split_size=None)
        return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    """Generate the GeoTIFFs, time both tools, print and write the JSON results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)

    import pandas  # noqa: F401 - imported by pyarrow for datetimes; keep it out of the timings
    import tacotoolbox  # noqa: F401

    import taco_gdal.write  # noqa: F401

    load_start = os.getloadavg()
    folder = Path(tempfile.mkdtemp(prefix="bench_write_10k_", dir=args.workdir))
    try:
        started = time.perf_counter()
        paths = make_tiffs(folder / "tiffs", args.samples)
        generated = time.perf_counter() - started
        ours, theirs = [], []
        for run in range(args.repeat):
            ours.append(_time_ours(paths, folder / f"ours{run}.tacozip"))
            theirs.append(_time_reference(paths, folder / f"ref{run}.tacozip"))
        sizes = {
            "taco_gdal": (folder / "ours0.tacozip").stat().st_size,
            "tacotoolbox": (folder / "ref0.tacozip").stat().st_size,
        }
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    best_ours, best_theirs = min(ours), min(theirs)
    results = {
        "benchmark": "write_10k",
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "load_average_at_start": load_start,
        "load_average_at_end": os.getloadavg(),
        "samples": args.samples,
        "repeat": args.repeat,
        "geotiff_generation_seconds": round(generated, 3),
        "create_seconds": {
            "taco_gdal": [round(t, 4) for t in ours],
            "tacotoolbox_0_26_9": [round(t, 4) for t in theirs],
        },
        "best_seconds": {
            "taco_gdal": round(best_ours, 4),
            "tacotoolbox_0_26_9": round(best_theirs, 4),
        },
        "speedup": round(best_theirs / best_ours, 2),
        "target_speedup": 3.0,
        "zip_bytes": sizes,
    }
    print(f"{args.samples:,} GeoTIFFs (generated in {generated:.1f} s)")
    runs = results["create_seconds"]
    print(f"  taco_gdal create:   best {best_ours:.3f} s  runs {runs['taco_gdal']}")
    print(f"  tacotoolbox create: best {best_theirs:.3f} s  runs {runs['tacotoolbox_0_26_9']}")
    print(f"  speedup: {results['speedup']}x (target >= 3x)")
    write_json(args.output, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
