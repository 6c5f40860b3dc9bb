"""Run every benchmark, one fresh process each, side by side with the reference tools.

``make bench`` (or ``.venv/bin/python -m bench.run_all``) runs them in sequence;
each writes its own JSON (and, for the remote harness, a markdown table and a
PNG plot) under ``bench/results/``, and this script keeps their printed reports
in ``bench/results/run_all.log``.  Figures are ratios measured in the same run;
absolute times depend on the machine and on its load, which each JSON records.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BENCHMARKS: list[tuple[str, list[str]]] = [
    ("metadata: 100k samples, taco_gdal vs tacotoolbox", ["bench.bench_metadata"]),
    ("write: 10k small GeoTIFFs vs tacotoolbox.create", ["bench.bench_write_10k", "--repeat", "5"]),
    ("write: 2 GB of 100 MB samples vs cp", ["bench.bench_write_throughput", "--repeat", "3"]),
    ("read a: 10k ZIP vs tacoreader", ["bench.bench_read_10k"]),
    ("read b: 1M level 0 vs tacoreader", ["bench.bench_read_1m"]),
    ("read c: 3-level cascade vs tacoreader", ["bench.bench_read_cascade"]),
    ("remote: HTTP with 25 ms latency, 1 and 8 workers", ["bench.remote"]),
]


def main() -> int:
    log_path = HERE / "results" / "run_all.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)  # untracked: absent in a fresh clone
    failures = 0
    with log_path.open("w") as log:
        for title, args in BENCHMARKS:
            header = f"== {title}: python -m {' '.join(args)}"
            print(header, flush=True)
            log.write(header + "\n")
            started = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True
            )
            elapsed = time.perf_counter() - started
            report = done.stdout + (done.stderr if done.returncode else "")
            print(report, flush=True)
            log.write(report + f"-- exit {done.returncode} after {elapsed:.0f} s\n\n")
            failures += done.returncode != 0
    print(f"reports kept in {log_path}; {failures} benchmark(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
