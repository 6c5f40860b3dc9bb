"""Benchmark: stream 2 GB of 100 MB samples into a TACO ZIP; throughput vs ``cp``, peak RSS.

20 local files of 100 MiB (non-zero data) are written as one TACO ZIP by
``taco_gdal.write.create`` in a fresh subprocess, which reports the time of the
``create()`` call and its peak resident memory (``VmHWM`` of
``/proc/self/status``, imports included; ``ru_maxrss`` would include the
parent's memory, which Linux carries across fork+exec).  The same files are
copied with ``cp`` to the same disk, followed by ``sync`` on the copies, since
the writer fsyncs its
output before linking it into place.  Runs alternate (cp, writer, cp, ...) with
the sources in the page cache for both; the median of ``--repeat`` runs is
reported.  Targets: writer throughput >= 0.8 x cp, peak RSS < 300 MB.

Run: ``.venv/bin/python bench/bench_write_throughput.py [--files 20] [--mib 100]``;
prints the figures and writes ``bench/results/write_throughput.json``.  All data
lives in a temporary folder (``--workdir`` to choose the disk) deleted at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

try:
    from bench._common import write_json
except ImportError:  # run as a script: python bench/bench_write_throughput.py
    from _common import write_json  # type: ignore[no-redef]

RESULTS = Path(__file__).resolve().parent / "results" / "write_throughput.json"
REPO = Path(__file__).resolve().parents[1]
MIB = 1024 * 1024

_CHILD = r"""
import json, sys, time
from pathlib import Path
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.write import create

sources = sorted(Path(sys.argv[1]).iterdir())
taco = Taco(
    Tortilla([Sample(p.stem, p) for p in sources]),
    id="throughput", dataset_version="1", description="throughput benchmark",
    licenses=["CC0-1.0"], providers=[{"name": "bench"}], tasks=["other"],
)
started = time.perf_counter()
create(taco, sys.argv[2], split_size=None, quiet=True)
seconds = time.perf_counter() - started
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the parent across fork+exec
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
peak_kib = int(status["VmHWM"].split()[0])
print(json.dumps({"seconds": seconds, "peak_rss_bytes": peak_kib * 1024}))
"""


def make_sources(folder: Path, files: int, mib: int) -> int:
    """``files`` files of ``mib`` MiB of pseudo-random, non-zero bytes; returns total bytes."""
    import numpy as np

    folder.mkdir(parents=True)
    block = np.random.default_rng(0).integers(1, 255, size=mib * MIB, dtype=np.uint8).tobytes()
    for i in range(files):
        with open(folder / f"sample{i:03d}.bin", "wb") as f:
            f.write(i.to_bytes(8, "little") + block[8:])
    return files * mib * MIB


def time_cp(sources: Path, target: Path) -> float:
    """Seconds for ``cp`` of every source into ``target`` plus ``sync`` of the copies."""
    files = sorted(str(p) for p in sources.iterdir())
    target.mkdir()
    started = time.perf_counter()
    subprocess.run(["cp", *files, str(target)], check=True)
    subprocess.run(["sync", *(str(target / Path(f).name) for f in files)], check=True)
    seconds = time.perf_counter() - started
    shutil.rmtree(target)
    return seconds


def time_writer(sources: Path, target: Path) -> dict[str, Any]:
    """The writer's ``create()`` time and peak RSS, measured in a fresh process."""
    result = subprocess.run(
        [sys.executable, "-c", _CHILD, str(sources), str(target)],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    )
    figures: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    target.unlink()
    return figures


def main(argv: list[str] | None = None) -> int:
    """Create the sources, alternate cp and writer runs, print and write the JSON results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--mib", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)

    load_start = os.getloadavg()
    folder = Path(tempfile.mkdtemp(prefix="bench_write_throughput_", dir=args.workdir))
    try:
        sources = folder / "sources"
        total = make_sources(sources, args.files, args.mib)
        subprocess.run(["sync"], check=True)
        cp_runs: list[float] = []
        writer_runs: list[dict[str, Any]] = []
        for _ in range(args.repeat):
            cp_runs.append(time_cp(sources, folder / "copy"))
            writer_runs.append(time_writer(sources, folder / "out.tacozip"))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    cp_s = statistics.median(cp_runs)
    writer_s = statistics.median(r["seconds"] for r in writer_runs)
    peak = max(r["peak_rss_bytes"] for r in writer_runs)
    results = {
        "benchmark": "write_throughput",
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "load_average_at_start": load_start,
        "load_average_at_end": os.getloadavg(),
        "files": args.files,
        "file_mib": args.mib,
        "total_bytes": total,
        "repeat": args.repeat,
        "cp_seconds": [round(s, 3) for s in cp_runs],
        "writer_seconds": [round(r["seconds"], 3) for r in writer_runs],
        "cp_mib_per_s": round(total / MIB / cp_s, 1),
        "writer_mib_per_s": round(total / MIB / writer_s, 1),
        "fraction_of_cp": round(cp_s / writer_s, 3),
        "target_fraction_of_cp": 0.8,
        "writer_peak_rss_mib": round(peak / MIB, 1),
        "writer_peak_rss_mib_runs": [round(r["peak_rss_bytes"] / MIB, 1) for r in writer_runs],
        "target_peak_rss_mib": 300,
    }
    print(f"{args.files} x {args.mib} MiB = {total / MIB:.0f} MiB")
    cp_rate = results["cp_mib_per_s"]
    print(
        f"  cp + sync:        median {cp_s:.2f} s  ({cp_rate} MiB/s)  runs {results['cp_seconds']}"
    )
    print(
        f"  taco_gdal create: median {writer_s:.2f} s  ({results['writer_mib_per_s']} MiB/s)  "
        f"runs {results['writer_seconds']}"
    )
    print(f"  fraction of cp: {results['fraction_of_cp']} (target >= 0.8)")
    print(f"  writer peak RSS: {results['writer_peak_rss_mib']} MiB (target < 300 MiB)")
    write_json(args.output, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
