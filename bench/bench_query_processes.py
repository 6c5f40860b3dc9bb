"""What the immutable query state costs: pickling, a forked child's first query, threads.

Run: ``.venv/bin/python -m bench.bench_query_processes`` (prints a table, writes
``bench/results/query_processes.json``).  Synthetic level-0 tables of 1k, 10k
and 100k rows (id, type, GDAL path, cloud cover, time, WKB centroid), loaded
as a dataset the way ``load()`` prepares a container.  Rounds are interleaved
and the worst round is reported beside the best.

* pickle: ``pickle.dumps`` of a dataset with three steps (sql, datetime, bbox)
  and ``pickle.loads`` + the first ``.data`` in a fresh state (what a spawned
  worker pays), against the level tables' own size;
* fork: the first ``.data`` in a forked child (its own database, and the
  spatial extension when the query needs it) vs the same query in the parent;
* threads: 8 threads x 25 filtered queries on ONE dataset (one connection,
  queries serialised by its lock) vs 8 threads on 8 copies (one connection
  each, DuckDB runs them in parallel) vs the same 200 queries sequentially.
"""

from __future__ import annotations

import json
import os
import pickle
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import shapely

from taco_gdal.read import TacoDataset
from taco_gdal.read.opening.containers.base import VsiRule
from taco_gdal.read.query.prepared import prepare_level
from taco_gdal.read.query.state import LevelTables, QueryState

SIZES = (1_000, 10_000, 100_000)
ROUNDS = 3
RESULTS = Path(__file__).parent / "results" / "query_processes.json"


def synthetic(rows: int) -> TacoDataset:
    """A flat dataset of ``rows`` FILE samples, prepared as load() prepares a container."""
    rng = np.random.default_rng(rows)
    lon = rng.uniform(-10, 10, rows)
    lat = rng.uniform(35, 45, rows)
    start = datetime(2023, 1, 1)
    table = pa.table(
        {
            "id": [f"s{i:07d}" for i in range(rows)],
            "type": ["FILE"] * rows,
            "internal:gdal_vsi": [
                f"/vsisubfile/{i * 1000}_1000,/data/x.tacozip" for i in range(rows)
            ],
            "cloud_cover": rng.uniform(0, 100, rows),
            "stac:time_start": pa.array([start + timedelta(minutes=i) for i in range(rows)]),
            "stac:centroid": pa.array(shapely.to_wkb(shapely.points(lon, lat)), pa.binary()),
        }
    )
    prepared, _ = prepare_level(table, 0, None, "synthetic")
    base = LevelTables((prepared,), VsiRule("stored"), f"synthetic-{rows}")
    return TacoDataset(QueryState(base, {"id": f"synthetic-{rows}"}, "synthetic"))


def filtered(ds: TacoDataset) -> TacoDataset:
    return (
        ds.sql("SELECT * FROM data WHERE cloud_cover < 50")
        .filter_datetime("2023-01-01/2023-03-01")
        .filter_bbox(-5, 36, 5, 44)
    )


def timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def fork_first_query(ds: TacoDataset) -> float:
    """Seconds for the first ``.data`` in a forked child (measured in the child)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(read)
        seconds = timed(lambda: ds.data)
        os.write(write, str(seconds).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        seconds = float(pipe.read())
    os.waitpid(pid, 0)
    return seconds


def threads(ds: TacoDataset, copies: bool) -> float:
    datasets = [
        TacoDataset(ds.state.with_base(LevelTables(*_fields(ds.state.base)))) if copies else ds
        for _ in range(8)
    ]
    for d in datasets:
        _ = d.data  # sessions built before timing

    def work(d: TacoDataset) -> None:
        for k in range(25):
            _ = d.filter_datetime(f"2023-01-01/2023-02-{1 + k % 27:02d}").to_arrow(0)

    with ThreadPoolExecutor(8) as pool:
        start = time.perf_counter()
        list(pool.map(work, datasets))
        return time.perf_counter() - start


def _fields(base: LevelTables) -> tuple[Any, ...]:
    return (base.tables, base.rule, base.where, base.sql_external_access)


def sequential(ds: TacoDataset) -> float:
    start = time.perf_counter()
    for _ in range(8):
        for k in range(25):
            _ = ds.filter_datetime(f"2023-01-01/2023-02-{1 + k % 27:02d}").to_arrow(0)
    return time.perf_counter() - start


def measure(rows: int) -> dict[str, Any]:
    ds = filtered(synthetic(rows))
    _ = ds.data
    rounds: dict[str, list[float]] = {}
    payload = pickle.dumps(ds)
    for _ in range(ROUNDS):
        rounds.setdefault("pickle_dumps_s", []).append(timed(lambda: pickle.dumps(ds)))
        rounds.setdefault("unpickle_and_first_data_s", []).append(
            timed(lambda: pickle.loads(payload).data)
        )
        rounds.setdefault("parent_data_s", []).append(timed(lambda: ds.data))
        rounds.setdefault("fork_child_first_data_s", []).append(fork_first_query(ds))
        rounds.setdefault("threads_one_dataset_s", []).append(threads(ds, copies=False))
        rounds.setdefault("threads_eight_copies_s", []).append(threads(ds, copies=True))
        rounds.setdefault("sequential_s", []).append(sequential(ds))
    out: dict[str, Any] = {
        "rows": rows,
        "metadata_nbytes": ds.metadata_nbytes,
        "pickle_bytes": len(payload),
    }
    for name, values in rounds.items():
        out[name] = {"best": min(values), "worst": max(values), "median": statistics.median(values)}
    return out


def main() -> None:
    results = [measure(rows) for rows in SIZES]
    print(
        f"{'rows':>8} {'tables MB':>9} {'pickle MB':>9} {'dumps s':>8} {'loads+data s':>12} "
        f"{'parent s':>8} {'fork 1st s':>10} {'8thr 1ds s':>10} {'8thr 8ds s':>10} {'seq s':>7}"
    )
    for r in results:

        def cell(key: str, r: dict[str, Any] = r) -> str:
            return f"{r[key]['best']:.3f}/{r[key]['worst']:.3f}"

        print(
            f"{r['rows']:>8} {r['metadata_nbytes'] / 1e6:>9.2f} {r['pickle_bytes'] / 1e6:>9.2f} "
            f"{cell('pickle_dumps_s'):>8} {cell('unpickle_and_first_data_s'):>12} "
            f"{cell('parent_data_s'):>8} {cell('fork_child_first_data_s'):>10} "
            f"{cell('threads_one_dataset_s'):>10} {cell('threads_eight_copies_s'):>10} "
            f"{cell('sequential_s'):>7}"
        )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"python": sys.version, "results": results}, indent=2) + "\n")
    print(f"wrote {RESULTS} (cells: best/worst of {ROUNDS} interleaved rounds)")


if __name__ == "__main__":
    main()
