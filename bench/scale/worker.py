"""One measure of one reader on one file, in a fresh process; prints one JSON line.

Run by :mod:`bench.scale.__main__` as
``python -m bench.scale.worker MEASURE READER PATH [--repeat N]`` with
``PYTHONPATH`` choosing the taco_gdal tree under test.  Measures:

* ``cold``: import the reader, ``load(path)``, ``.data``; seconds from before
  the import to after ``.data`` (the interpreter's own start is not counted).
* ``warm``: after one warm-up of each step, the median of ``repeat`` runs of
  ``load``, the first ``.data`` of a freshly loaded dataset (``data``),
  ``.data`` again on one dataset (``data_again``), the bbox + datetime filter (``filter_bbox`` on
  ``istac:centroid`` then ``filter_datetime``, then ``.data``) and the same filter on a freshly
  loaded dataset (``first_filter``).  ``--ops``
  picks a subset (10M runs ``load,filter``).
* ``nav``: ``frame = ds.data`` once, then ``frame.read(i)`` of FOLDER rows
  spread over the level, ``repeat`` calls; median seconds per call.
* ``rss``: the reader and pyarrow, pandas, geopandas, shapely and DuckDB are
  imported first; peak RSS (``VmHWM``) after ``load`` + ``.data`` minus
  the RSS after the imports.
* ``rss_warm``: as ``rss``, but ``load`` + ``.data`` + ``head()`` of a small
  dataset (``--warm-up``) run first, so that modules either reader imports on
  first use count as imports; the peak (``VmHWM``, reset after the warm-up)
  minus the RSS after the warm-up.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import resource
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

BOX = (-3.0, 40.0, 3.0, 45.0)
"""A box in EPSG:4326 over the ``istac:centroid`` points (about 2% of the samples)."""
SPAN = "2021-01-01/2021-06-30"
"""Half a year of the three the samples span."""
GEOMETRY = "istac:centroid"


def _reader(name: str) -> Any:
    return importlib.import_module(name)


def _rss_mb() -> float:
    """Current resident set size in MiB (from /proc)."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * resource.getpagesize() / 2**20


def _peak_mb() -> float:
    """Peak RSS of this process in MiB: ``VmHWM``, not ``ru_maxrss``.

    Linux carries ``ru_maxrss`` across ``exec``, so a worker would report at
    least its parent's RSS at the fork; ``VmHWM`` belongs to this process's
    own address space.
    """
    with open("/proc/self/status") as f:
        line = next(line for line in f if line.startswith("VmHWM"))
    return int(line.split()[1]) / 1024


def _median(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    result = fn()  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def _filtered(ds: Any) -> Any:
    return ds.filter_bbox(*BOX, geometry_col=GEOMETRY).filter_datetime(SPAN).data


def cold(reader: str, path: str) -> dict[str, Any]:
    start = time.perf_counter()
    module = _reader(reader)
    frame = module.load(path).data
    return {"seconds": time.perf_counter() - start, "rows": len(frame)}


def warm(reader: str, path: str, repeat: int, ops: list[str]) -> dict[str, Any]:
    module = _reader(reader)
    out: dict[str, Any] = {}
    ds = module.load(path)
    if "load" in ops:
        out["load"], ds = _median(lambda: module.load(path), repeat)
    if "data" in ops:
        # The first .data of a freshly loaded dataset (readers may keep work
        # for the next call; this measure never benefits from it) ...
        firsts = []
        for _ in range(repeat):
            fresh = module.load(path)
            start = time.perf_counter()
            frame = fresh.data
            firsts.append(time.perf_counter() - start)
            del frame, fresh
        out["data"] = statistics.median(firsts)
        # ... and .data again on the same dataset.
        out["data_again"], frame = _median(lambda: ds.data, repeat)
        out["rows"] = len(frame)
        del frame
    if "first_filter" in ops:
        # The same filter on a freshly loaded dataset: what it costs the first time
        # (taco_gdal decodes a large level's deferred WKB columns then).
        firsts = []
        for _ in range(repeat):
            fresh = module.load(path)
            start = time.perf_counter()
            frame = _filtered(fresh)
            firsts.append(time.perf_counter() - start)
            del frame, fresh
        out["first_filter"] = statistics.median(firsts)
    if "filter" in ops:
        out["filter"], frame = _median(lambda: _filtered(ds), repeat)
        out["filter_rows"] = len(frame)
        out["filter_ids"] = sorted(str(v) for v in frame["id"])[:5]
    return out


def nav(reader: str, path: str, repeat: int) -> dict[str, Any]:
    module = _reader(reader)
    frame = module.load(path).data
    n = len(frame)
    positions = [(i * 7919) % n for i in range(repeat + 1)]
    children = frame.read(positions[0])  # warm-up
    times = []
    for position in positions[1:]:
        start = time.perf_counter()
        children = frame.read(position)
        times.append(time.perf_counter() - start)
    return {"nav": statistics.median(times), "children": len(children), "parents": n}


def rss(reader: str, path: str) -> dict[str, Any]:
    import duckdb  # noqa: F401
    import geopandas  # noqa: F401
    import pandas  # noqa: F401
    import pyarrow.parquet  # noqa: F401
    import shapely  # noqa: F401

    module = _reader(reader)
    if reader == "taco_gdal":
        importlib.import_module("taco_gdal.read")
    gc.collect()
    base = _rss_mb()
    frame = module.load(path).data
    peak = _peak_mb()
    return {
        "imports_mb": base,
        "peak_above_imports_mb": peak - base,
        "peak_mb": peak,
        "rows": len(frame),
    }


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # Linux: reset VmHWM to the current RSS


def rss_warm(reader: str, path: str, warm_up: str) -> dict[str, Any]:
    import duckdb  # noqa: F401
    import geopandas  # noqa: F401
    import pandas  # noqa: F401
    import pyarrow.parquet  # noqa: F401
    import shapely  # noqa: F401

    module = _reader(reader)
    small = module.load(warm_up).data
    small.head()
    del small
    gc.collect()
    base = _rss_mb()
    _reset_peak()
    frame = module.load(path).data
    peak = _peak_mb()
    return {"warm_mb": base, "peak_above_warm_mb": peak - base, "rows": len(frame)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("measure", choices=["cold", "warm", "nav", "rss", "rss_warm"])
    parser.add_argument("reader", choices=["taco_gdal", "tacoreader"])
    parser.add_argument("path")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ops", default="load,data,first_filter,filter")
    parser.add_argument("--warm-up", default="", help="rss_warm: the small dataset loaded first")
    args = parser.parse_args()
    if args.measure == "cold":
        result = cold(args.reader, args.path)
    elif args.measure == "warm":
        result = warm(args.reader, args.path, args.repeat, args.ops.split(","))
    elif args.measure == "nav":
        result = nav(args.reader, args.path, args.repeat)
    elif args.measure == "rss":
        result = rss(args.reader, args.path)
    else:
        result = rss_warm(args.reader, args.path, args.warm_up)
    result["module"] = sys.modules[args.reader].__file__
    print(json.dumps(result))


if __name__ == "__main__":
    main()
