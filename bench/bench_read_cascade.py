"""Benchmark (c): three levels (100k / 400k / 1.2M rows), filters at level 2.

A metadata-only TACO ZIP: 100,000 FOLDERs, each with 4 FOLDERs, each with 3
FILEs; level 2 carries ``stac:centroid`` and ``stac:time_start``.  Both
readers, same process, warm (one warm-up, then the median of ``--repeat``):

* ``filter_bbox(-10, 35, 10, 45, level=2).data``: the level-0 samples with at
  least one matching level-2 descendant (cascading semi-joins);
* ``filter_datetime("2021-03-01/2021-03-02", level=2).data``.

Target: a level-2 filter < 1 s.  Run:
``.venv/bin/python bench/bench_read_cascade.py [--repeat 5]``; writes
``bench/results/bench_read_cascade.json``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

try:
    from bench.bench_read_datasets import (
        CASCADE,
        compare_readers,
        machine,
        measure,
        ms,
        write_results,
    )
except ImportError:  # run as a script: python bench/bench_read_cascade.py
    from bench_read_datasets import (  # type: ignore[no-redef]
        CASCADE,
        compare_readers,
        machine,
        measure,
        ms,
        write_results,
    )

BOX = (-10.0, 35.0, 10.0, 45.0)
SPAN = "2021-03-01/2021-03-02"


def _run(module: Any, path: Path, repeat: int) -> dict[str, Any]:
    load_s, _, ds = measure(lambda: module.load(str(path)), repeat)
    bbox_s, bbox_all, boxed = measure(lambda: ds.filter_bbox(*BOX, level=2).data, repeat)
    time_s, time_all, timed = measure(lambda: ds.filter_datetime(SPAN, level=2).data, repeat)
    return {
        "bbox_level2_min_s": min(bbox_all),
        "datetime_level2_min_s": min(time_all),
        "load_s": load_s,
        "bbox_level2_s": bbox_s,
        "datetime_level2_s": time_s,
        "bbox_rows": len(boxed),
        "datetime_rows": len(timed),
        "bbox_ids": sorted(str(v) for v in boxed["id"]),
    }


def main() -> None:
    """Time both readers on the same file and write the JSON results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    path, generated, runs = compare_readers("cascade", CASCADE, _run, args.repeat)
    same = runs["taco_gdal"]["bbox_ids"] == runs["tacoreader"]["bbox_ids"]
    print(f"3 levels, 100k/400k/1.2M rows: {path} (generated/cached in {generated:.1f} s)")
    print(
        f"{'':12}{'load':>12}{'bbox L2':>12}{'(min)':>12}{'time L2':>12}{'(min)':>12}{'rows':>14}"
    )
    for name, run in runs.items():
        print(
            f"{name:12}{ms(run['load_s']):>12}{ms(run['bbox_level2_s']):>12}"
            f"{ms(run['bbox_level2_min_s']):>12}{ms(run['datetime_level2_s']):>12}"
            f"{ms(run['datetime_level2_min_s']):>12}{run['bbox_rows']:>7}/{run['datetime_rows']:<6}"
        )
        run["bbox_ids"] = run["bbox_ids"][:5]
    ours = runs["taco_gdal"]
    met = {"level-2 filter < 1 s": max(ours["bbox_level2_s"], ours["datetime_level2_s"]) < 1.0}
    print(f"same bbox rows in both: {same}; targets: {met}")
    results = {
        "benchmark": "c: 3-level cascade 100k/400k/1.2M, filter at level 2 (warm)",
        "file": str(path),
        "repeat": args.repeat,
        "machine": machine(),
        "runs": runs,
        "same_bbox_rows": same,
        "targets": met,
        "speedup_bbox": runs["tacoreader"]["bbox_level2_s"] / ours["bbox_level2_s"],
    }
    print("wrote", write_results("bench_read_cascade", results))


if __name__ == "__main__":
    main()
