"""Benchmark: large samples into a TACO ZIP vs ``cp`` + ``sync`` of the same bytes; peak RSS.

For each size set (default ``8x256,20x100,2x1024,10000x16k``: files x MiB, or
x KiB with a ``k`` suffix, of non-zero, incompressible bytes), the same source
files are, in interleaved rounds:

* copied by ``cp`` into a fresh folder of the same disk, then ``sync`` of the
  copies *and* of the folder (the writer fsyncs its file and the folder entry
  of its atomic link, so both sides end with the same bytes durable);
* written as one TACO ZIP by ``taco_gdal.write.create`` in a fresh subprocess,
  which times the ``create()`` call (imports not timed) and reports its peak
  resident memory (``VmHWM``; ``ru_maxrss`` would inherit the parent's);
* with ``--checksum ALGO[,ALGO...]``, written again with
  ``create(..., checksum=ALGO)`` for each (the per-sample digest's overhead,
  as ``digest run / plain run - 1`` of the same round).  The writer runs of a
  round go in the opposite order in the next round (plain first, then digests
  first), so whatever the position in a round costs falls on both sides.
  ``--checksum none`` adds a second plain run per round, reported like a
  digest: the spread of this A/A "overhead" is the noise of the measurement
  on the machine at that time, to read every digest's figure against.

The sources are in the page cache for every run (each round reads them all).
Each round gives a ratio ``cp seconds / writer seconds`` from adjacent runs, so
a burst of load from other processes hits both sides of one ratio; the median,
best and worst ratio over the rounds are reported with the load averages.
Targets: median ratio >= 0.9, peak RSS < 300 MB (issue 14); digest overhead
<= 5% on 20 x 100 MiB and on 10k small samples (issue 11).  ``--baseline DIR``
also times the writer of another checkout (``git worktree add DIR <commit>``)
in the same rounds (plain and with each checksum), so a change is compared with
what it replaces on the same data under the same load.  Each run also reports
its CPU seconds (every thread of the writer's process, ``time.process_time``).

Run: ``.venv/bin/python bench/bench_write_throughput.py [--sets 8x256,20x100,2x1024,10000x16k]
[--rounds 5] [--checksum xxh3,crc32c,sha256] [--baseline DIR]``; prints a table and writes
``bench/results/write_throughput.json``.  Data lives in a temporary folder
(``--workdir`` to choose the disk), deleted at the end.
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
checksum = sys.argv[3] or None
taco = Taco(
    Tortilla([Sample(p.stem, p) for p in sources]),
    id="throughput", dataset_version="1", description="throughput benchmark",
    licenses=["CC0-1.0"], providers=[{"name": "bench"}], tasks=["other"],
)
cpu = time.process_time()
started = time.perf_counter()
create(taco, sys.argv[2], split_size=None, quiet=True, checksum=checksum)
seconds = time.perf_counter() - started
cpu = time.process_time() - cpu
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
print(json.dumps({
    "seconds": seconds, "cpu_seconds": cpu,
    "peak_rss_bytes": int(status["VmHWM"].split()[0]) * 1024,
}))
"""


KIB = 1024


def parse_set(text: str) -> tuple[int, int]:
    """``"20x100"`` -> (20, 100 MiB in bytes); ``"10000x16k"`` -> (10000, 16 KiB)."""
    files, size = text.split("x")
    if size.endswith("k"):
        return int(files), int(size[:-1]) * KIB
    return int(files), int(size) * MIB


def set_label(files: int, size: int) -> str:
    return f"{files} x {size // MIB} MiB" if size % MIB == 0 else f"{files} x {size // KIB} KiB"


def make_sources(folder: Path, files: int, size: int) -> int:
    """``files`` files of ``size`` bytes of pseudo-random bytes (distinct first 8 bytes)."""
    import numpy as np

    folder.mkdir(parents=True)
    block = np.random.default_rng(0).integers(1, 255, size=size, dtype=np.uint8).tobytes()
    for i in range(files):
        with open(folder / f"sample{i:05d}.bin", "wb") as f:
            f.write(i.to_bytes(8, "little") + block[8:])
    return files * size


def time_cp(sources: Path, target: Path) -> float:
    """Seconds for ``cp`` of every source into ``target`` plus ``sync`` of copies and folder."""
    files = sorted(str(p) for p in sources.iterdir())
    target.mkdir()
    started = time.perf_counter()
    subprocess.run(["cp", *files, str(target)], check=True)
    copies = [str(target / Path(f).name) for f in files]
    subprocess.run(["sync", *copies, str(target)], check=True)
    seconds = time.perf_counter() - started
    shutil.rmtree(target)
    return seconds


def _algorithm(checksum: str | None) -> str | None:
    """The ``checksum=`` of a run: ``"none"`` is the A/A control, a plain run again."""
    return None if checksum == "none" else checksum


def time_writer(
    sources: Path, target: Path, checksum: str | None, repo: Path = REPO
) -> dict[str, Any]:
    """The writer's ``create()`` time and peak RSS, measured in a fresh process."""
    result = subprocess.run(
        [sys.executable, "-c", _CHILD, str(sources), str(target), _algorithm(checksum) or ""],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    )
    figures: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    target.unlink()
    return figures


def _summary(ratios: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(ratios), 3),
        "best": round(max(ratios), 3),
        "worst": round(min(ratios), 3),
    }


def _overhead(runs: list[dict[str, Any]], plain: list[dict[str, Any]]) -> dict[str, float]:
    """Wall overhead per round; and the extra CPU seconds, alone and over the plain wall time.

    The extra CPU is what the digest costs when nothing overlaps it: less
    sensitive than the wall time to another process's burst or to the disk.
    """
    pairs = list(zip(runs, plain, strict=True))
    overhead = [h["seconds"] / w["seconds"] - 1 for h, w in pairs]
    extra = [h["cpu_seconds"] - w["cpu_seconds"] for h, w in pairs]
    return {
        "median": round(statistics.median(overhead), 3),
        "best": round(min(overhead), 3),
        "worst": round(max(overhead), 3),
        "extra_cpu_seconds_median": round(statistics.median(extra), 3),
        "extra_cpu_over_plain_wall_median": round(
            statistics.median(e / w["seconds"] for e, (_, w) in zip(extra, pairs, strict=True)), 3
        ),
    }


def run_set(
    folder: Path,
    files: int,
    size: int,
    rounds: int,
    checksums: list[str],
    baseline: Path | None = None,
) -> dict[str, Any]:
    """Interleaved rounds of cp, writer (and writer + each checksum, baseline) for one set."""
    sources = folder / f"sources_{files}x{size}"
    total = make_sources(sources, files, size)
    subprocess.run(["sync"], check=True)
    cp_s: list[float] = []
    writer: list[dict[str, Any]] = []
    hashed: dict[str, list[dict[str, Any]]] = {name: [] for name in checksums}
    base: list[dict[str, Any]] = []
    loads: list[float] = []
    out = folder / "out.tacozip"
    base_hashed: dict[str, list[dict[str, Any]]] = {name: [] for name in checksums}
    runs: list[tuple[str | None, Path]] = [(None, REPO)] + [(name, REPO) for name in checksums]
    if baseline is not None:
        runs += [(None, baseline)] + [(name, baseline) for name in checksums]
    for round_ in range(rounds):
        loads.append(os.getloadavg()[0])
        cp_s.append(time_cp(sources, folder / "copy"))
        for name, repo in runs if round_ % 2 == 0 else runs[::-1]:
            figures = time_writer(sources, out, name, repo)
            if repo == REPO:
                (writer if name is None else hashed[name]).append(figures)
            else:
                (base if name is None else base_hashed[name]).append(figures)
    shutil.rmtree(sources)
    ratios = [c / w["seconds"] for c, w in zip(cp_s, writer, strict=True)]
    everything = writer + base + [r for series in hashed.values() for r in series]
    result: dict[str, Any] = {
        "files": files,
        "file_bytes": size,
        "label": set_label(files, size),
        "total_bytes": total,
        "cp_sync_seconds": [round(s, 3) for s in cp_s],
        "writer_seconds": [round(w["seconds"], 3) for w in writer],
        "writer_cpu_seconds": [round(w["cpu_seconds"], 3) for w in writer],
        "ratio_cp_over_writer": _summary(ratios),
        "ratio_runs": [round(r, 3) for r in ratios],
        "writer_mib_per_s_median": round(
            total / MIB / statistics.median(w["seconds"] for w in writer), 1
        ),
        "peak_rss_mib": round(max(w["peak_rss_bytes"] for w in everything) / MIB, 1),
        "load_average_1min": [round(x, 2) for x in loads],
    }
    if baseline is not None:
        result["baseline"] = str(baseline)
        result["baseline_seconds"] = [round(b["seconds"], 3) for b in base]
        result["ratio_cp_over_baseline"] = _summary(
            [c / b["seconds"] for c, b in zip(cp_s, base, strict=True)]
        )
    result["checksums"] = {
        name: {
            "writer_seconds": [round(h["seconds"], 3) for h in series],
            "writer_cpu_seconds": [round(h["cpu_seconds"], 3) for h in series],
            "overhead": _overhead(series, writer),
        }
        for name, series in hashed.items()
    }
    if baseline is not None:
        result["baseline_checksums"] = {
            name: {
                "writer_seconds": [round(h["seconds"], 3) for h in series],
                "overhead": _overhead(series, base),
            }
            for name, series in base_hashed.items()
        }
    return result


def _print(result: dict[str, Any]) -> None:
    r = result["ratio_cp_over_writer"]
    print(
        f"{result['label']}: cp+sync / writer median {r['median']} "
        f"(best {r['best']}, worst {r['worst']}; target >= 0.9), writer "
        f"{result['writer_mib_per_s_median']} MiB/s, peak RSS {result['peak_rss_mib']} MiB "
        f"(target < 300), load {result['load_average_1min']}"
    )
    print(
        f"    cp+sync {result['cp_sync_seconds']}  writer {result['writer_seconds']} "
        f"(CPU {result['writer_cpu_seconds']})"
    )
    if "baseline" in result:
        b = result["ratio_cp_over_baseline"]
        print(
            f"    baseline {result['baseline']}: cp+sync / baseline median {b['median']} "
            f"(best {b['best']}, worst {b['worst']})  {result['baseline_seconds']}"
        )
    for name, figures in result["checksums"].items():
        o = figures["overhead"]
        label = "plain again (A/A noise)" if name == "none" else f"checksum={name}"
        print(
            f"    {label}: overhead median {o['median']:+.1%} "
            f"(best {o['best']:+.1%}, worst {o['worst']:+.1%}; target <= +5%); extra CPU "
            f"median {o['extra_cpu_seconds_median']:+.3f} s = "
            f"{o['extra_cpu_over_plain_wall_median']:+.1%} of the plain wall time  "
            f"{figures['writer_seconds']} (CPU {figures['writer_cpu_seconds']})"
        )
    for name, figures in result.get("baseline_checksums", {}).items():
        o = figures["overhead"]
        print(
            f"    baseline checksum={name}: overhead median {o['median']:+.1%} "
            f"(best {o['best']:+.1%}, worst {o['worst']:+.1%})  {figures['writer_seconds']}"
        )


def main(argv: list[str] | None = None) -> int:
    """Run every size set, print the ratios and write the JSON results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sets", default="8x256,20x100,2x1024,10000x16k", help="files x MiB (or x KiB: 16k)"
    )
    parser.add_argument("--rounds", "--repeat", type=int, default=5, help="interleaved rounds")
    parser.add_argument(
        "--checksum", default="", help="also time create(checksum=...) for each, comma list"
    )
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout to time")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    sets = [parse_set(item) for item in args.sets.split(",")]
    checksums = [name for name in args.checksum.split(",") if name]
    folder = Path(tempfile.mkdtemp(prefix="bench_write_throughput_", dir=args.workdir))
    results = []
    try:
        for files, size in sets:
            results.append(run_set(folder, files, size, args.rounds, checksums, args.baseline))
            _print(results[-1])
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    worst = min(r["ratio_cp_over_writer"]["median"] for r in results)
    write_json(
        args.output,
        {
            "benchmark": "write_throughput",
            "python": sys.version.split()[0],
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "rounds": args.rounds,
            "sets": results,
            "worst_median_ratio": worst,
            "target_ratio": 0.9,
            "target_peak_rss_mib": 300,
        },
    )
    print(f"worst set median ratio: {worst} (target >= 0.9)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
