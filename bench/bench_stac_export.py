"""STAC export: time and peak memory of ``taco stac`` / ``to_stac_geoparquet`` at several sizes.

Each size is a metadata-only TACO ZIP of FILE samples at level 0 built by
``bench_read_datasets.make_metadata_zip`` (``stac:centroid`` points over the
globe, ``stac:time_start`` over three years, ``cloud_cover``), cached between
runs.  Every export runs in a fresh process so its peak RSS (``ru_maxrss``) is
its own: load, then write every Item to the output (stac-geoparquet by
default, through the ``stac-geoparquet`` library; ``--format ndjson`` writes
NDJSON only).  The target is a million samples in under a minute, in memory
that does not grow with the Item count beyond the level tables.

Run: ``python -m bench.bench_stac_export [--sizes 10000,100000,1000000]
[--format parquet|ndjson]``; writes ``bench/results/bench_stac_export.json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

try:
    from bench._common import write_json
    from bench.bench_read_datasets import Level, machine, make_metadata_zip
except ImportError:  # run as a script: python bench/bench_stac_export.py
    from _common import write_json  # type: ignore[no-redef]
    from bench_read_datasets import (  # type: ignore[no-redef]
        Level,
        machine,
        make_metadata_zip,
    )

RESULTS = Path(__file__).parent / "results" / "bench_stac_export.json"
_CHILD = """
import json, resource, sys, time
from pathlib import Path
import taco_gdal
from taco_gdal.read.interop.stac_files import write_stac
path, out = sys.argv[1], Path(sys.argv[2])
start = time.perf_counter()
ds = taco_gdal.load(path)
loaded = time.perf_counter()
_, count = write_stac(ds.state, out)
done = time.perf_counter()
print(json.dumps({"items": count, "load_s": loaded - start, "export_s": done - loaded,
                  "total_s": done - start, "bytes": out.stat().st_size,
                  "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def export_once(dataset: Path, suffix: str) -> dict[str, Any]:
    """Export ``dataset`` in a fresh interpreter; its timings and peak RSS."""
    with tempfile.TemporaryDirectory(prefix="bench-stac-") as work:
        out = Path(work) / f"items{suffix}"
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, str(dataset), str(out)],
            capture_output=True,
            text=True,
            check=True,
        )
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    """Build (or reuse) each dataset, export it once per size, print and save the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated")
    parser.add_argument("--format", choices=["parquet", "ndjson"], default="parquet")
    args = parser.parse_args()
    sizes = [int(v) for v in args.sizes.split(",") if v.strip()]
    suffix = f".{args.format}"
    runs = []
    print(f"{'samples':>10}{'load s':>10}{'export s':>10}{'total s':>10}{'peak MiB':>10}")
    for size in sizes:
        dataset = make_metadata_zip(f"stac_export_{size}", [Level(size, 1)])
        run = {"samples": size, **export_once(dataset, suffix)}
        runs.append(run)
        print(
            f"{size:>10}{run['load_s']:>10.2f}{run['export_s']:>10.2f}{run['total_s']:>10.2f}"
            f"{run['peak_rss_mib']:>10.0f}"
        )
    met = {
        "1M in < 60 s": next((r["total_s"] < 60 for r in runs if r["samples"] >= 1_000_000), None)
    }
    write_json(
        RESULTS,
        {
            "benchmark": "STAC export (write_stac) of level-0 FILE samples, fresh process each",
            "format": args.format,
            "machine": machine(),
            "runs": runs,
            "targets": met,
        },
    )


if __name__ == "__main__":
    main()
