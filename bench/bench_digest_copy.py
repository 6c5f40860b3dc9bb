"""Benchmark: what each per-sample digest adds to the writer's copy loop, without the disk.

``write._copy.copy_fd`` (the ZIP writer's one-pass copy of a local sample) copies
page-cached files of each ``--mib`` size (default ``1,16,100``) into ``--outdir``
(default ``/dev/shm``, tmpfs: no disk, no fsync) plain and with each digest.
Each round is one fresh process that copies every size plain and with every
digest, each digest's run next to a plain run (order reversed every other
round), so a difference is taken between adjacent copies of the same bytes.
This isolates the digest's CPU cost from the disk and the rest of
``create()``.  The extra milliseconds over the adjacent plain copy are reported
as median, best and worst of the rounds, with the CPU seconds of the process
(every thread: a digest computed by the helper thread costs CPU on the other
core, not wall time on this one).  ``--baseline DIR`` (another checkout, e.g.
``git archive <commit> taco_gdal | tar -x -C DIR``) runs the same rounds,
alternating with this tree round by round, on the same files.

Run: ``.venv/bin/python bench/bench_digest_copy.py [--rounds 15] [--mib 1,16,100]
[--baseline DIR]``; prints a table and writes ``bench/results/digest_copy.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

try:
    from bench._common import write_json
except ImportError:  # run as a script: python bench/bench_digest_copy.py
    from _common import write_json  # type: ignore[no-redef]

RESULTS = Path(__file__).resolve().parent / "results" / "digest_copy.json"
REPO = Path(__file__).resolve().parents[1]
ALGORITHMS = ("crc32c", "xxh3", "sha256")

_CHILD = r"""
import json, os, sys, time
from taco_gdal.format.checksum import StreamingDigest
from taco_gdal.write._copy import copy_fd

sources, outdir, flip = sys.argv[1].split(","), sys.argv[2], sys.argv[3] == "1"
algorithms = sys.argv[4].split(",")
target = os.path.join(outdir, f"digest_copy_{os.getpid()}.bin")

def copy(src, size, algorithm):
    dst = os.open(target, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    digest = None if algorithm is None else StreamingDigest(algorithm)
    cpu, started = time.process_time(), time.perf_counter()
    copy_fd(src, 0, size, dst, 0, digest)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    os.close(dst)
    return seconds, cpu

out = {}
for source in sources:
    src = os.open(source, os.O_RDONLY)
    size = os.fstat(src).st_size
    for algorithm in [None, *algorithms]:  # warm: the target's pages, the digest thread
        copy(src, size, algorithm)
    figures = {}
    for algorithm in algorithms:
        pair = [None, algorithm] if flip else [algorithm, None]
        timed = {str(a): copy(src, size, a) for a in pair}
        figures[algorithm] = {"plain": timed["None"], "digest": timed[algorithm]}
        flip = not flip
    out[str(size)] = figures
    os.close(src)
os.unlink(target)
print(json.dumps(out))
"""


def _round(repo: Path, sources: list[Path], outdir: Path, flip: bool) -> dict[str, Any]:
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            _CHILD,
            ",".join(map(str, sources)),
            str(outdir),
            "1" if flip else "0",
            ",".join(ALGORITHMS),
        ],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    )
    figures: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return figures


def _summary(rounds: list[dict[str, Any]], size: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    plain = [r[str(size)][a]["plain"][0] for r in rounds for a in ALGORITHMS]
    plain_ms = statistics.median(plain) * 1e3
    out["plain_ms_median"] = round(plain_ms, 2)
    for name in ALGORITHMS:
        pairs = [r[str(size)][name] for r in rounds]
        extra = [(p["digest"][0] - p["plain"][0]) * 1e3 for p in pairs]
        cpu = [(p["digest"][1] - p["plain"][1]) * 1e3 for p in pairs]
        median = statistics.median(extra)
        out[name] = {
            "extra_ms_median": round(median, 2),
            "extra_ms_best": round(min(extra), 2),
            "extra_ms_worst": round(max(extra), 2),
            "extra_over_plain_median": round(median / plain_ms, 3),
            "extra_cpu_ms_median": round(statistics.median(cpu), 2),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    """Time the copy loop with every digest, here and in the baseline checkout."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--mib", default="1,16,100", help="sizes in MiB, comma list")
    parser.add_argument("--outdir", type=Path, default=Path("/dev/shm"))
    parser.add_argument("--baseline", type=Path, default=None)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    sizes = [int(float(m) * 1024 * 1024) for m in args.mib.split(",")]
    repos = [REPO] if args.baseline is None else [REPO, args.baseline]
    rounds: dict[str, list[dict[str, Any]]] = {str(r): [] for r in repos}
    loads = []
    with tempfile.TemporaryDirectory(prefix="bench_digest_copy_") as folder:
        sources = []
        for size in sizes:
            sources.append(Path(folder) / f"source_{size}.bin")
            sources[-1].write_bytes(os.urandom(size))
        for index in range(args.rounds):
            loads.append(round(os.getloadavg()[0], 2))
            for repo in repos if index % 2 == 0 else repos[::-1]:
                rounds[str(repo)].append(_round(repo, sources, args.outdir, index % 2 == 1))
    results = {
        repo: {str(size): _summary(series, size) for size in sizes}
        for repo, series in rounds.items()
    }
    print(f"copy_fd to {args.outdir}, {args.rounds} rounds, load {loads}")
    for repo, by_size in results.items():
        for size, figures in by_size.items():
            print(f"{repo}: {int(size) / 2**20:g} MiB, plain {figures['plain_ms_median']} ms")
            for name in ALGORITHMS:
                f = figures[name]
                print(
                    f"    {name}: {f['extra_ms_median']:+.2f} ms median "
                    f"({f['extra_over_plain_median']:+.1%} of the copy), best "
                    f"{f['extra_ms_best']:+.2f}, worst {f['extra_ms_worst']:+.2f}; "
                    f"extra CPU {f['extra_cpu_ms_median']:+.2f} ms"
                )
    write_json(
        args.output,
        {
            "benchmark": "digest_copy",
            "sizes_bytes": sizes,
            "rounds": args.rounds,
            "load_average_1min": loads,
            "results": results,
            "raw": rounds,
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
