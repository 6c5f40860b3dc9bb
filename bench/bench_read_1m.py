"""Benchmark (b): 1,000,000 samples at level 0: load, then a bbox + datetime filter.

A metadata-only TACO ZIP (``stac:centroid`` WKB points spread over the globe,
``stac:time_start`` over three years); both readers in the same process, warm
(one warm-up, then the median of ``--repeat`` runs; the spatial extension is
loaded by the warm-up, its one-off cost is reported apart).

* load: ``load(path)``;
* filter: ``filter_bbox(-10, 35, 10, 45).filter_datetime("2021-01-01/2021-12-31")``
  then ``.data`` (the rows that survive; both readers must agree).

Targets: load < 0.5 s, filter < 100 ms.  Run:
``.venv/bin/python bench/bench_read_1m.py [--repeat 5]``; writes
``bench/results/bench_read_1m.json``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

try:
    from bench.bench_read_datasets import (
        MILLION,
        compare_readers,
        machine,
        measure,
        ms,
        write_results,
    )
except ImportError:  # run as a script: python bench/bench_read_1m.py
    from bench_read_datasets import (  # type: ignore[no-redef]
        MILLION,
        compare_readers,
        machine,
        measure,
        ms,
        write_results,
    )

BOX = (-10.0, 35.0, 10.0, 45.0)
SPAN = "2021-01-01/2021-12-31"


def _run(module: Any, path: Path, repeat: int) -> dict[str, Any]:
    load_s, load_all, ds = measure(lambda: module.load(str(path)), repeat)
    start = time.perf_counter()
    first = ds.filter_bbox(*BOX).data  # loads the spatial extension if needed
    first_s = time.perf_counter() - start

    def filtered() -> Any:
        return ds.filter_bbox(*BOX).filter_datetime(SPAN).data

    filter_s, filter_all, frame = measure(filtered, repeat)
    ids = sorted(str(v) for v in frame["id"])
    return {
        "load_min_s": min(load_all),
        "filter_min_s": min(filter_all),
        "load_s": load_s,
        "first_bbox_s": first_s,
        "filter_s": filter_s,
        "bbox_rows": len(first),
        "rows": len(ids),
        "ids": ids,
    }


def main() -> None:
    """Time both readers on the same file and write the JSON results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    path, generated, runs = compare_readers("million", MILLION, _run, args.repeat)
    same = runs["taco_gdal"]["ids"] == runs["tacoreader"]["ids"]
    print(f"1,000,000 samples at level 0: {path} (generated/cached in {generated:.1f} s)")
    print(
        f"{'':12}{'load':>12}{'(min)':>12}{'bbox+time':>12}{'(min)':>12}{'1st bbox':>12}{'rows':>8}"
    )
    for name, run in runs.items():
        print(
            f"{name:12}{ms(run['load_s']):>12}{ms(run['load_min_s']):>12}{ms(run['filter_s']):>12}"
            f"{ms(run['filter_min_s']):>12}{ms(run['first_bbox_s']):>12}{run['rows']:>8}"
        )
        run["ids"] = run["ids"][:5]
    ours = runs["taco_gdal"]
    met = {"load < 0.5 s": ours["load_s"] < 0.5, "filter < 100 ms": ours["filter_s"] < 0.1}
    print(f"same rows in both: {same}; targets: {met}")
    results = {
        "benchmark": "b: 1M-sample level 0, load and bbox+datetime filter (warm)",
        "file": str(path),
        "repeat": args.repeat,
        "machine": machine(),
        "runs": runs,
        "same_rows": same,
        "targets": met,
        "speedup_load": runs["tacoreader"]["load_s"] / ours["load_s"],
        "speedup_filter": runs["tacoreader"]["filter_s"] / ours["filter_s"],
    }
    print("wrote", write_results("bench_read_1m", results))


if __name__ == "__main__":
    main()
