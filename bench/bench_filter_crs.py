"""CRS-correct ``filter_bbox``: footprints in 4 CRSs versus the EPSG:4326-only case.

Two metadata-only TACO ZIPs per size (10k, 100k, 1M level-0 samples), same
positions on the ground, same box, same process, rounds interleaved:

* ``4crs``: ``istac:geometry`` rectangles of about 10 km (``--tile-m``) stored in EPSG:4326,
  UTM 29N, 30N and 31N (a quarter each), ``istac:crs`` beside them, so three
  quarters are reprojected to 4326 (vertices first, whole rings on demand);
* ``4326``: the same rectangles stored in EPSG:4326 (no reprojection).

Per dataset, per round, with a fresh ``load`` each round:

* ``load``: ``taco_gdal.load`` (the same work on both sides);
* ``first``: the first ``filter_bbox`` + ``len`` after ``load``: it computes the
  level's 4326 footprints (the one-off cost, cached for the dataset);
* ``warm``: a second ``filter_bbox`` (another box) + ``len`` on the same dataset:
  bounds pre-filter + exact test on the rows the bounds do not decide + the
  DuckDB row-set step;
* ``data``: ``.data`` of the warm result (GeoDataFrame with the footprints);
* ``total``: the four together, what a user waits for.

Each stage is timed in wall time (the figure) and in the process's CPU time
(all threads: the CRS path reprojects on two), which a busy machine inflates
less.  ``gc.collect()`` runs before each round, outside the timers.

One warm-up round per dataset is not counted (imports, pyproj transformers,
DuckDB); then ``--rounds`` rounds, interleaved with the order alternating
(4326, 4crs, 4crs, 4326, ...).  Per stage: median times, and the ratio
``4crs / 4326`` of each round, median and worst (the target is <= 2x).  The
load average is printed before and after each size.  No assertion: figures
only.  Run (figures that are reported: under the shared lock, at normal
priority)::

    flock /tmp/taco_bench.lock .venv/bin/python bench/bench_filter_crs.py \\
        [--sizes 10000 100000 1000000] [--rounds 5] [--label <commit>]

writes ``bench/results/<--name>.json`` (default ``bench_filter_crs``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import shapely
from pyproj import Transformer

try:
    from bench.bench_read_datasets import CACHE, _data_offsets, machine, tiny_tif, write_results
except ImportError:  # run as a script
    from bench_read_datasets import (  # type: ignore[no-redef]
        CACHE,
        _data_offsets,
        machine,
        tiny_tif,
        write_results,
    )

CRSS = ("EPSG:4326", "EPSG:32629", "EPSG:32630", "EPSG:32631")
FIRST_BOX = (-6.0, 38.0, 2.0, 42.0)
WARM_BOX = (-3.0, 39.0, 1.0, 41.5)
SIZE_M = 10_000.0


def _rectangles(
    n: int, seed: int, mixed: bool, size_m: float = SIZE_M
) -> tuple[pa.Array, pa.Array]:
    """``n`` rectangles of ``size_m`` over Iberia (-9.5 .. 3.5 E, 36 .. 43.5 N), WKB + CRS."""
    rng = np.random.default_rng(seed)
    lon = rng.uniform(-9.5, 3.5, n)
    lat = rng.uniform(36.0, 43.5, n)
    crs_index = (np.arange(n) % len(CRSS)) if mixed else np.zeros(n, dtype=int)
    geoms = np.empty(n, dtype=object)
    names = np.empty(n, dtype=object)
    for k, crs in enumerate(CRSS):
        rows = np.flatnonzero(crs_index == k)
        if rows.size == 0:
            continue
        names[rows] = crs
        if crs == "EPSG:4326":
            dx = size_m / (111_320 * np.cos(np.radians(lat[rows])))
            dy = size_m / 110_574
            geoms[rows] = shapely.box(lon[rows], lat[rows], lon[rows] + dx, lat[rows] + dy)
        else:
            x, y = Transformer.from_crs("EPSG:4326", crs, always_xy=True).transform(
                lon[rows], lat[rows]
            )
            geoms[rows] = shapely.box(x, y, np.asarray(x) + size_m, np.asarray(y) + size_m)
    return pa.array(shapely.to_wkb(geoms), pa.binary()), pa.array(names, pa.string())


def _collection(table: pa.Table, name: str) -> dict[str, Any]:
    return {
        "id": name,
        "dataset_version": "1.0.0",
        "description": "metadata-only CRS filter benchmark",
        "licenses": ["CC-BY-4.0"],
        "providers": [{"name": "bench", "roles": None, "url": None, "links": None}],
        "tasks": ["classification"],
        "taco_version": "2.0.0",
        "title": None,
        "curators": None,
        "keywords": None,
        "extent": {"spatial": [-10, 35, 4, 44], "temporal": None},
        "taco:pit_schema": {"root": {"n": table.num_rows, "type": "FILE"}, "hierarchy": {}},
        "taco:field_schema": {"level0": [[f.name, str(f.type).lower(), ""] for f in table.schema]},
    }


def make_zip(n: int, mixed: bool, size_m: float = SIZE_M) -> Path:
    """A cached metadata-only TACO ZIP of ``n`` FILE rows sharing 4 tiny GeoTIFF members."""
    import tacozip

    name = f"crs_{'4crs' if mixed else '4326'}_{n}"
    if size_m != SIZE_M:
        name += f"_{size_m:.0f}m"
    target = CACHE / f"{name}.tacozip"
    if target.exists():
        return target
    work = CACHE / f"{name}.work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    tifs = [tiny_tif(work / f"t{i}.tif", i) for i in range(4)]
    data_names = [f"DATA/t{i}.tif" for i in range(4)]
    probe = work / "probe.tacozip"
    tacozip.create(str(probe), tifs, data_names, [(0, 0)])
    blobs = _data_offsets(probe, data_names)
    geometry, crs = _rectangles(n, seed=7, mixed=mixed, size_m=size_m)
    pick = np.arange(n) % len(blobs)
    table = pa.table(
        {
            "id": pa.array([f"s{i:07d}" for i in range(n)]),
            "type": pa.array(np.full(n, "FILE", dtype=object), pa.string()),
            "istac:geometry": geometry,
            "istac:crs": crs,
            "internal:current_id": pa.array(np.arange(n, dtype=np.int64)),
            "internal:parent_id": pa.array(np.arange(n, dtype=np.int64)),
            "internal:offset": pa.array(np.array([b[0] for b in blobs])[pick]),
            "internal:size": pa.array(np.array([b[1] for b in blobs])[pick]),
        }
    )
    level = work / "level0.parquet"
    pq.write_table(table, level, compression="zstd", row_group_size=65_536)
    collection = work / "COLLECTION.json"
    collection.write_text(json.dumps(_collection(table, name), indent=2))
    meta_names = ["METADATA/level0.parquet", "COLLECTION.json"]
    partial = work / "out.tacozip"
    tacozip.create(
        str(partial), [*tifs, level, collection], [*data_names, *meta_names], [(0, 0)] * 2
    )
    tacozip.update_header(str(partial), _data_offsets(partial, meta_names))
    partial.rename(target)
    shutil.rmtree(work)
    return target


STAGES = ("load", "first", "warm", "data", "total")


def _round(path: Path) -> dict[str, float | int]:
    import taco_gdal

    gc.collect()  # the previous round's objects are not freed inside this one's timers
    marks = [(time.perf_counter(), time.process_time())]
    ds = taco_gdal.load(str(path))
    marks.append((time.perf_counter(), time.process_time()))
    first_rows = len(ds.filter_bbox(*FIRST_BOX))
    marks.append((time.perf_counter(), time.process_time()))
    warm_ds = ds.filter_bbox(*WARM_BOX)
    warm_rows = len(warm_ds)
    marks.append((time.perf_counter(), time.process_time()))
    frame = warm_ds.data
    marks.append((time.perf_counter(), time.process_time()))
    assert len(frame) == warm_rows
    out: dict[str, float | int] = {"rows": first_rows}
    for k, stage in enumerate(STAGES[:-1]):
        out[stage] = marks[k + 1][0] - marks[k][0]
        out[f"{stage}_cpu"] = marks[k + 1][1] - marks[k][1]
    out["total"] = marks[-1][0] - marks[0][0]
    out["total_cpu"] = marks[-1][1] - marks[0][1]
    return out


def _summary(runs: dict[str, list[dict[str, float | int]]]) -> dict[str, dict[str, float]]:
    """Per stage: median times, and the ratio 4crs / 4326 of each round (median and worst)."""
    out: dict[str, dict[str, float]] = {}
    for stage in STAGES:
        per_round = [a[stage] / b[stage] for a, b in zip(runs["4crs"], runs["4326"], strict=True)]
        cpu = f"{stage}_cpu"
        per_round_cpu = [a[cpu] / b[cpu] for a, b in zip(runs["4crs"], runs["4326"], strict=True)]
        out[stage] = {
            "4crs_median_s": statistics.median(r[stage] for r in runs["4crs"]),
            "4326_median_s": statistics.median(r[stage] for r in runs["4326"]),
            "4crs_worst_s": max(r[stage] for r in runs["4crs"]),
            "4326_worst_s": max(r[stage] for r in runs["4326"]),
            "ratio_median": statistics.median(per_round),
            "ratio_worst_round": max(per_round),
            "cpu_ratio_median": statistics.median(per_round_cpu),
            "cpu_ratio_worst_round": max(per_round_cpu),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tile-m", type=float, default=SIZE_M, help="rectangle side (metres)")
    parser.add_argument("--label", default="", help="what was measured (e.g. a commit)")
    parser.add_argument("--name", default="bench_filter_crs", help="results file name")
    args = parser.parse_args()
    results: dict[str, Any] = {
        "machine": machine(),
        "label": args.label,
        "tile_m": args.tile_m,
        "sizes": {},
    }
    print(f"{args.label}  tiles {args.tile_m:g} m  load average at start {os.getloadavg()}")
    for n in args.sizes:
        paths = {"4crs": make_zip(n, True, args.tile_m), "4326": make_zip(n, False, args.tile_m)}
        for kind in ("4326", "4crs"):  # warm-up, not counted: imports, transformers, caches
            _round(paths[kind])
        load_before = os.getloadavg()
        runs: dict[str, list[dict[str, float | int]]] = {"4crs": [], "4326": []}
        for k in range(args.rounds):  # interleaved, the order alternating: 4326 4crs 4crs 4326
            for kind in ("4326", "4crs") if k % 2 == 0 else ("4crs", "4326"):
                runs[kind].append(_round(paths[kind]))
        summary = _summary(runs)
        results["sizes"][str(n)] = {
            "load_average_before": load_before,
            "load_average_after": os.getloadavg(),
            "runs": runs,
            "summary": summary,
        }
        print(
            f"n={n:>9,}  rows in first box: 4crs {runs['4crs'][0]['rows']:,} / "
            f"4326 {runs['4326'][0]['rows']:,}; {args.rounds} rounds; load average "
            f"{load_before[0]:.2f} -> {os.getloadavg()[0]:.2f}"
        )
        for stage in STAGES:
            row = summary[stage]
            print(
                f"  {stage:5}  median 4crs {row['4crs_median_s'] * 1000:8.1f} ms  "
                f"4326 {row['4326_median_s'] * 1000:8.1f} ms   ratio median "
                f"{row['ratio_median']:.2f}x, worst round {row['ratio_worst_round']:.2f}x"
                f"   (CPU time: median {row['cpu_ratio_median']:.2f}x, "
                f"worst {row['cpu_ratio_worst_round']:.2f}x)"
            )
    print(f"wrote {write_results(args.name, results)}")


if __name__ == "__main__":
    main()
