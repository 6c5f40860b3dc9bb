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
* with ``--checksum ALGO[,ALGO...]``, for each ALGO a pair of runs back to
  back: ``create()`` plain and ``create(..., checksum=ALGO)``, the order
  alternating from one pair to the next and the pairs of a round reversed in
  the next round.  ``--checksum none`` pairs a plain run with another plain
  run: the A/A control, whose spread is the noise of the measurement on the
  machine at that time, to read every digest's figure against.

The digest's overhead is the extra wall time of the digest run over the plain
run of its pair, median and worst over the rounds, divided by the median plain
wall time of the set, with the number of pairs in which the digest run was the
slower (about half for the A/A control; all of them for a real cost); each run
also reports its CPU seconds (every thread of the writer's process, user and
system), whose paired difference is what the digest costs when nothing
overlaps it.  ``--workdir /dev/shm`` writes to
tmpfs: no disk, no fsync wait, so the extra time of the digest is measured
without the disk's state between runs (use ``--no-cp`` there); on a disk the
writer fsyncs, and the figure is the synced wall time users see.

The sources are in the page cache for every run (each round reads them all).
Each round gives a ratio ``cp seconds / writer seconds`` (the round's median
plain run), so a burst of load from other processes hits both sides of one
ratio; the median, best and worst ratio over the rounds are reported with the
load averages, and each round's load, ``cp`` + ``sync`` and writer seconds are
printed, so a bad round shows which side was slow.  Targets: median ratio
>= 0.9, peak RSS < 300 MB (issue 14); digest overhead <= 5% on 20 x 100 MiB
and on 10k small samples (issue 11).
``--baseline DIR`` also times the plain writer of another checkout
(``git archive <commit> taco_gdal | tar -x -C DIR``) paired with this one's in
the same rounds, so a change is compared with what it replaces on the same
data under the same load.

Run: ``.venv/bin/python bench/bench_write_throughput.py [--sets 8x256,20x100,2x1024,10000x16k]
[--rounds 5] [--checksum none,crc32c,xxh3,sha256] [--baseline DIR] [--workdir DIR]
[--no-cp]``; prints a table and writes
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
import os
times = os.times()
cpu = time.process_time()
started = time.perf_counter()
create(taco, sys.argv[2], split_size=None, quiet=True, checksum=checksum)
seconds = time.perf_counter() - started
cpu = time.process_time() - cpu
after = os.times()
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
print(json.dumps({
    "seconds": seconds, "cpu_seconds": cpu,
    "user_seconds": after.user - times.user, "sys_seconds": after.system - times.system,
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


Pair = tuple[dict[str, Any], dict[str, Any]]
"""A plain run and the variant's run next to it."""


def _paired(pairs: list[Pair], plain_wall: float) -> dict[str, Any]:
    """Extra wall and CPU seconds of each (plain, variant) pair run back to back.

    The overhead is the median (and the worst) extra wall time over the median
    plain wall time of the set: a difference of adjacent runs, so the state of
    the disk and the load between rounds fall on both sides.  The extra CPU
    seconds (every thread of the writer) are what the digest costs when
    nothing overlaps it, less sensitive to another process's burst.
    """
    extra = [v["seconds"] - p["seconds"] for p, v in pairs]
    extra_cpu = [v["cpu_seconds"] - p["cpu_seconds"] for p, v in pairs]
    return {
        "pairs": len(pairs),
        "slower_pairs": sum(e > 0 for e in extra),
        "extra_seconds": [round(e, 4) for e in extra],
        "extra_seconds_median": round(statistics.median(extra), 4),
        "extra_seconds_worst": round(max(extra), 4),
        "overhead_median": round(statistics.median(extra) / plain_wall, 4),
        "overhead_worst": round(max(extra) / plain_wall, 4),
        "extra_cpu_seconds_median": round(statistics.median(extra_cpu), 4),
        "extra_cpu_seconds_worst": round(max(extra_cpu), 4),
        "cpu_seconds_median": round(statistics.median(v["cpu_seconds"] for _, v in pairs), 4),
        "plain_cpu_seconds_median": round(statistics.median(p["cpu_seconds"] for p, _ in pairs), 4),
        "extra_cpu_overhead_median": round(
            statistics.median(extra_cpu) / statistics.median(p["cpu_seconds"] for p, _ in pairs),
            4,
        ),
        "user_seconds_median": round(statistics.median(v["user_seconds"] for _, v in pairs), 3),
        "sys_seconds_median": round(statistics.median(v["sys_seconds"] for _, v in pairs), 3),
        "plain_user_seconds_median": round(
            statistics.median(p["user_seconds"] for p, _ in pairs), 3
        ),
        "plain_sys_seconds_median": round(statistics.median(p["sys_seconds"] for p, _ in pairs), 3),
        "writer_seconds": [round(v["seconds"], 4) for _, v in pairs],
        "plain_seconds": [round(p["seconds"], 4) for p, _ in pairs],
        "writer_cpu_seconds": [round(v["cpu_seconds"], 4) for _, v in pairs],
        "plain_cpu_seconds": [round(p["cpu_seconds"], 4) for p, _ in pairs],
    }


def run_set(
    folder: Path,
    files: int,
    size: int,
    rounds: int,
    checksums: list[str],
    baseline: Path | None = None,
    cp: bool = True,
    baseline_digests: bool = False,
) -> dict[str, Any]:
    """Interleaved rounds of cp, then one (plain, variant) pair per variant, for one set.

    A variant is each checksum (``none``: plain again, the A/A control) and,
    with ``baseline``, the baseline checkout's plain writer (and, with
    ``baseline_digests``, its writer with each checksum), always paired with
    this tree's plain writer.  Within a pair the
    order alternates (plain first, then the variant first), and the pairs of a
    round run in the opposite order in the next round.
    """
    sources = folder / f"sources_{files}x{size}"
    total = make_sources(sources, files, size)
    subprocess.run(["sync"], check=True)
    out = folder / "out.tacozip"
    variants: list[tuple[str, str | None, Path]] = [(name, name, REPO) for name in checksums]
    if baseline is not None:
        variants.append(("baseline", None, baseline))
        if baseline_digests:
            variants += [(f"baseline:{n}", n, baseline) for n in checksums if n != "none"]
    pairs: dict[str, list[Pair]] = {v[0]: [] for v in variants}
    cp_s: list[float] = []
    plain_by_round: list[list[dict[str, Any]]] = []
    loads: list[float] = []
    flip = False
    for round_ in range(rounds):
        loads.append(os.getloadavg()[0])
        if cp:
            cp_s.append(time_cp(sources, folder / "copy"))
        plain_runs = []
        for label, checksum, repo in variants if round_ % 2 == 0 else variants[::-1]:
            if flip:
                other = time_writer(sources, out, checksum, repo)
                plain = time_writer(sources, out, None)
            else:
                plain = time_writer(sources, out, None)
                other = time_writer(sources, out, checksum, repo)
            flip = not flip
            pairs[label].append((plain, other))
            plain_runs.append(plain)
            if checksum == "none" and repo == REPO:  # the A/A run is a plain run of this tree too
                plain_runs.append(other)
        plain_by_round.append(plain_runs)
    shutil.rmtree(sources)
    every_plain = [p for runs in plain_by_round for p in runs]
    plain_wall = statistics.median(p["seconds"] for p in every_plain)
    round_plain = [statistics.median(p["seconds"] for p in runs) for runs in plain_by_round]
    everything = every_plain + [v for series in pairs.values() for _, v in series]
    result: dict[str, Any] = {
        "files": files,
        "file_bytes": size,
        "label": set_label(files, size),
        "total_bytes": total,
        "workdir": str(folder),
        "plain_seconds_median": round(plain_wall, 4),
        "plain_seconds_worst": round(max(p["seconds"] for p in every_plain), 4),
        "plain_cpu_seconds_median": round(
            statistics.median(p["cpu_seconds"] for p in every_plain), 4
        ),
        "writer_mib_per_s_median": round(total / MIB / plain_wall, 1),
        "peak_rss_mib": round(max(w["peak_rss_bytes"] for w in everything) / MIB, 1),
        "load_average_1min": [round(x, 2) for x in loads],
        "variants": {label: _paired(series, plain_wall) for label, series in pairs.items()},
    }
    result["round_plain_seconds"] = [round(w, 3) for w in round_plain]
    if cp:
        ratios = [c / w for c, w in zip(cp_s, round_plain, strict=True)]
        result["cp_sync_seconds"] = [round(c, 3) for c in cp_s]
        result["ratio_cp_over_writer"] = _summary(ratios)
        result["ratio_runs"] = [round(r, 3) for r in ratios]
    if baseline is not None:
        base = [v["seconds"] for _, v in pairs["baseline"]]
        result["baseline"] = str(baseline)
        if cp:
            result["ratio_cp_over_baseline"] = _summary(
                [c / b for c, b in zip(cp_s, base, strict=True)]
            )
    return result


def _print(result: dict[str, Any]) -> None:
    r = result
    print(
        f"{r['label']} in {r['workdir']}: plain writer {r['plain_seconds_median']} s median "
        f"(worst {r['plain_seconds_worst']}), CPU {r['plain_cpu_seconds_median']} s, "
        f"{r['writer_mib_per_s_median']} MiB/s, peak RSS {r['peak_rss_mib']} MiB, "
        f"load {r['load_average_1min']}"
    )
    if "ratio_cp_over_writer" in result:
        r = result["ratio_cp_over_writer"]
        print(
            f"    cp+sync / writer median {r['median']} (best {r['best']}, worst {r['worst']}; "
            f"target >= 0.9)"
        )
        rows = zip(
            result["load_average_1min"],
            result["cp_sync_seconds"],
            result["round_plain_seconds"],
            result["ratio_runs"],
            strict=True,
        )
        for i, (load, cp_s, writer_s, ratio) in enumerate(rows):
            print(
                f"      round {i}: load {load:5.2f}  cp+sync {cp_s:6.3f} s  "
                f"writer {writer_s:6.3f} s  ratio {ratio:.3f}"
            )
    if "ratio_cp_over_baseline" in result:
        b = result["ratio_cp_over_baseline"]
        print(
            f"    cp+sync / baseline {result['baseline']} median {b['median']} "
            f"(best {b['best']}, worst {b['worst']})"
        )
    for label, o in result["variants"].items():
        name = {"none": "plain again (A/A)", "baseline": "baseline plain"}.get(
            label, f"checksum={label}".replace("checksum=baseline:", "baseline checksum=")
        )
        print(
            f"    {name}: extra {o['extra_seconds_median']:+.4f} s median "
            f"= {o['overhead_median']:+.1%} of the plain wall "
            f"(worst {o['extra_seconds_worst']:+.4f} s = {o['overhead_worst']:+.1%}), "
            f"slower in {o['slower_pairs']} of {o['pairs']} pairs; "
            f"CPU {o['cpu_seconds_median']:.3f} s (user {o['user_seconds_median']:.2f} "
            f"+ sys {o['sys_seconds_median']:.2f}) vs plain {o['plain_cpu_seconds_median']:.3f} s "
            f"(user {o['plain_user_seconds_median']:.2f} "
            f"+ sys {o['plain_sys_seconds_median']:.2f}), "
            f"extra median {o['extra_cpu_seconds_median']:+.4f} s "
            f"= {o['extra_cpu_overhead_median']:+.1%} (worst {o['extra_cpu_seconds_worst']:+.4f})"
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
    parser.add_argument("--no-cp", action="store_true", help="skip the cp + sync runs")
    parser.add_argument(
        "--baseline-digests", action="store_true", help="also the baseline's checksum runs"
    )
    args = parser.parse_args(argv)
    sets = [parse_set(item) for item in args.sets.split(",")]
    checksums = [name for name in args.checksum.split(",") if name]
    folder = Path(tempfile.mkdtemp(prefix="bench_write_throughput_", dir=args.workdir))
    results = []
    try:
        for files, size in sets:
            results.append(
                run_set(
                    folder,
                    files,
                    size,
                    args.rounds,
                    checksums,
                    args.baseline,
                    not args.no_cp,
                    args.baseline_digests,
                )
            )
            _print(results[-1])
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    ratios = [r["ratio_cp_over_writer"]["median"] for r in results if "ratio_cp_over_writer" in r]
    worst = min(ratios) if ratios else None
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
    if worst is not None:
        print(f"worst set median ratio: {worst} (target >= 0.9)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
