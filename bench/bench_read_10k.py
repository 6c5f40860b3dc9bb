"""Benchmark (a): 10,000-sample ZIP, load + one SQL filter + open the first sample.

Same file, same process, both readers warm (one warm-up run each, then the
median of ``--repeat`` runs), as in the reference timing study:

* taco_gdal: ``load(path).sql("SELECT * FROM data WHERE cloud_cover BETWEEN 10
  AND 12 AND split = 'test' ORDER BY id").data.read(0)``, then
  ``rasterio.open(path).read(1)``;
* tacoreader 2.4.21: ``load(path).sql('SELECT "l0:id", "l0:internal:gdal_vsi"
  FROM l0 WHERE ... ORDER BY "l0:id"')`` (its ``sql`` runs immediately), then
  the same ``rasterio`` read.

Target: taco_gdal at least 5x faster.  Run:
``.venv/bin/python bench/bench_read_10k.py [--repeat 20]``; writes
``bench/results/bench_read_10k.json``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import rasterio

try:
    from bench.bench_read_datasets import (
        machine,
        make_10k,
        measure,
        ms,
        prepare_tacoreader,
        write_results,
    )
except ImportError:  # run as a script: python bench/bench_read_10k.py
    from bench_read_datasets import (  # type: ignore[no-redef]
        machine,
        make_10k,
        measure,
        ms,
        prepare_tacoreader,
        write_results,
    )

OURS_SQL = "SELECT * FROM data WHERE cloud_cover BETWEEN 10 AND 12 AND split = 'test' ORDER BY id"
REFERENCE_SQL = (
    'SELECT "l0:id", "l0:internal:gdal_vsi" FROM l0 WHERE "l0:cloud_cover" BETWEEN 10 AND 12 '
    'AND "l0:split" = \'test\' ORDER BY "l0:id"'
)


def _pixels(path: str) -> int:
    with rasterio.open(path) as src:
        return int(src.read(1).sum())


def ours(path: Path) -> dict[str, Any]:
    import taco_gdal.read as reader

    start = time.perf_counter()
    ds = reader.load(path)
    loaded = time.perf_counter()
    frame = ds.sql(OURS_SQL).data
    queried = time.perf_counter()
    first = frame.read(0)
    assert isinstance(first, str)
    total = _pixels(first)
    done = time.perf_counter()
    ds.close()
    return {
        "load": loaded - start,
        "sql": queried - loaded,
        "open": done - queried,
        "total": done - start,
        "rows": len(frame),
        "first": first,
        "pixels": total,
    }


def reference(path: Path) -> dict[str, Any]:
    import tacoreader

    start = time.perf_counter()
    ds = tacoreader.load(str(path))
    loaded = time.perf_counter()
    table = ds.sql(REFERENCE_SQL)
    queried = time.perf_counter()
    first = table.column("l0:internal:gdal_vsi")[0].as_py()
    total = _pixels(first)
    done = time.perf_counter()
    ds.close()
    return {
        "load": loaded - start,
        "sql": queried - loaded,
        "open": done - queried,
        "total": done - start,
        "rows": table.num_rows,
        "first": first,
        "pixels": total,
    }


def main() -> None:
    """Time both readers on the same file and write the JSON results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    import taco_gdal

    prepare_tacoreader()
    path = make_10k()
    runs: dict[str, dict[str, Any]] = {}
    with taco_gdal.Env(GDAL_DISABLE_READDIR_ON_OPEN="EMPTY_DIR"):
        for name, fn in (("taco_gdal", ours), ("tacoreader", reference)):
            phases: dict[str, list[float]] = {}

            def once(fn: Any = fn, phases: dict[str, list[float]] = phases) -> dict[str, Any]:
                result = fn(path)
                for key in ("load", "sql", "open", "total"):
                    phases.setdefault(key, []).append(result[key])
                return result

            _, _, last = measure(once, args.repeat)
            medians = {k: sorted(v[1:])[len(v[1:]) // 2] for k, v in phases.items()}
            runs[name] = {
                "median_s": medians,
                "rows": last["rows"],
                "first": last["first"],
                "pixels": last["pixels"],
            }
    assert runs["taco_gdal"]["rows"] == runs["tacoreader"]["rows"]
    assert runs["taco_gdal"]["pixels"] == runs["tacoreader"]["pixels"]
    speedup = runs["tacoreader"]["median_s"]["total"] / runs["taco_gdal"]["median_s"]["total"]
    print(f"10,000-sample ZIP {path} ({args.repeat} warm runs, medians)")
    print(f"{'':12}{'load':>12}{'sql':>12}{'open+read':>12}{'total':>12}")
    for name, run in runs.items():
        m = run["median_s"]
        print(
            f"{name:12}{ms(m['load']):>12}{ms(m['sql']):>12}{ms(m['open']):>12}{ms(m['total']):>12}"
        )
    print(f"speed-up {speedup:.1f}x (target >= 5x); {runs['taco_gdal']['rows']} rows selected")
    results = {
        "benchmark": "a: 10k ZIP load + SQL + open first sample (warm process)",
        "file": str(path),
        "repeat": args.repeat,
        "machine": machine(),
        "runs": runs,
        "speedup": speedup,
        "target": ">= 5x",
        "met": speedup >= 5,
    }
    print("wrote", write_results("bench_read_10k", results))


if __name__ == "__main__":
    main()
