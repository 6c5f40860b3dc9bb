"""Where load and ``.data`` spend time and memory: ``python -m bench.scale.profile [--rows N]``.

One process, the taco_gdal on ``PYTHONPATH`` (or this checkout): a warm-up
load, then ``cProfile`` of ``load`` and of ``.data`` (top functions by
cumulative and own time), then ``tracemalloc`` peaks of each step (Python and
Arrow allocations that go through Python's allocator; Arrow's own pool is
reported apart from ``pyarrow.total_allocated_bytes``).  Writes
``bench/results/scale_profile[-label].md``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pyarrow as pa

from bench.scale import datasets

RESULTS = Path(__file__).resolve().parents[2] / "bench" / "results"


def _profile(fn: Any, top: int) -> tuple[Any, str, float]:
    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.enable()
    result = fn()
    profiler.disable()
    seconds = time.perf_counter() - start
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    return result, out.getvalue(), seconds


def _memory(fn: Any) -> tuple[Any, float, float]:
    pool_before = pa.total_allocated_bytes()
    tracemalloc.start()
    result = fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return result, peak / 2**20, (pa.total_allocated_bytes() - pool_before) / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--top", type=int, default=18)
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    import taco_gdal

    path = str(datasets.flat(args.rows))
    warm = taco_gdal.load(path).data  # warm-up: imports, DuckDB database
    del warm
    ds, load_text, load_s = _profile(lambda: taco_gdal.load(path), args.top)
    frame, data_text, data_s = _profile(lambda: ds.data, args.top)
    del frame
    _, filter_text, filter_s = _profile(
        lambda: (
            ds.filter_bbox(-3, 40, 3, 45, geometry_col="istac:centroid")
            .filter_datetime("2021-01-01/2021-06-30")
            .data
        ),
        args.top,
    )
    ds2, load_py, load_arrow = _memory(lambda: taco_gdal.load(path))
    _, data_py, data_arrow = _memory(lambda: ds2.data)
    parquet = datasets.parquet_bytes(Path(path)) / 2**20
    lines = [
        f"# Profile of load / .data / filter at {args.rows:,} rows ({taco_gdal.__file__})",
        "",
        f"parquet {parquet:.1f} MiB; load {load_s:.2f} s, .data {data_s:.2f} s, "
        f"filter {filter_s:.3f} s (under cProfile)",
        f"tracemalloc peak: load {load_py:.0f} MiB, .data {data_py:.0f} MiB; "
        f"Arrow pool still held: after load {load_arrow:.0f} MiB, after .data {data_arrow:.0f} MiB",
        "",
        "## load",
        "```",
        load_text.strip(),
        "```",
        "## .data",
        "```",
        data_text.strip(),
        "```",
        "## filter",
        "```",
        filter_text.strip(),
        "```",
    ]
    name = "scale_profile" + (f"-{args.label}" if args.label else "")
    (RESULTS / f"{name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:5]))
    print(f"wrote {RESULTS / name}.md")


if __name__ == "__main__":
    main()
