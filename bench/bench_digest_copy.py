"""Benchmark: what each per-sample digest adds to the writer's copy loop, without the disk.

``write._copy.copy_fd`` (the ZIP writer's one-pass copy of a local sample) copies
one page-cached file of ``--mib`` MiB into ``--outdir`` (default ``/dev/shm``,
tmpfs: no disk, no fsync) plain and with each digest, in interleaved rounds
(the order reversed every other round), all in one process.  This isolates the
digest's CPU cost from the disk and the rest of ``create()``, whose wall time on
a shared 2-core machine varies more than the 5% the digest is allowed
(``bench_write_throughput.py --checksum none,...`` shows that spread).  The
extra milliseconds over the plain copy are reported as median, best and worst
of the rounds; ``--baseline DIR`` runs the same in another checkout
(``git worktree add DIR <commit>``), in a child process after this one.

Run: ``.venv/bin/python bench/bench_digest_copy.py [--rounds 15] [--mib 100]
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
import time
from pathlib import Path
from typing import Any

try:
    from bench._common import write_json
except ImportError:  # run as a script: python bench/bench_digest_copy.py
    from _common import write_json  # type: ignore[no-redef]

RESULTS = Path(__file__).resolve().parent / "results" / "digest_copy.json"
REPO = Path(__file__).resolve().parents[1]
ALGORITHMS = (None, "crc32c", "xxh3", "sha256")

_CHILD = r"""
import json, os, sys, time
from taco_gdal.format.checksum import StreamingDigest
from taco_gdal.write._copy import copy_fd

source, outdir, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
algorithms = [None, "crc32c", "xxh3", "sha256"]
size = os.path.getsize(source)
times = {str(a): [] for a in algorithms}
target = os.path.join(outdir, f"digest_copy_{os.getpid()}.bin")
src = os.open(source, os.O_RDONLY)
load = os.getloadavg()[0]
for r in range(rounds):
    for a in algorithms if r % 2 == 0 else algorithms[::-1]:
        dst = os.open(target, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
        digest = None if a is None else StreamingDigest(a)
        started = time.perf_counter()
        copy_fd(src, 0, size, dst, 0, digest)
        times[str(a)].append(time.perf_counter() - started)
        os.close(dst)
os.close(src)
os.unlink(target)
print(json.dumps({"times": times, "load_start": load, "load_end": os.getloadavg()[0]}))
"""


def run(repo: Path, source: Path, outdir: Path, rounds: int) -> dict[str, Any]:
    """Rounds of copy_fd with every digest, timed in a fresh process importing ``repo``."""
    result = subprocess.run(
        [sys.executable, "-c", _CHILD, str(source), str(outdir), str(rounds)],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    )
    raw: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    plain = raw["times"]["None"]
    out: dict[str, Any] = {
        "repo": str(repo),
        "load_average_1min": [round(raw["load_start"], 2), round(raw["load_end"], 2)],
        "plain_ms": {
            "median": round(statistics.median(plain) * 1e3, 1),
            "best": round(min(plain) * 1e3, 1),
        },
    }
    for name in ALGORITHMS[1:]:
        extra = [(t - p) * 1e3 for t, p in zip(raw["times"][str(name)], plain, strict=True)]
        median = statistics.median(extra)
        out[str(name)] = {
            "extra_ms_median": round(median, 1),
            "extra_ms_best": round(min(extra), 1),
            "extra_ms_worst": round(max(extra), 1),
            "extra_over_plain_median": round(median / (statistics.median(plain) * 1e3), 3),
        }
    return out


def _print(result: dict[str, Any], mib: int) -> None:
    p = result["plain_ms"]
    print(
        f"{result['repo']}: plain copy of {mib} MiB {p['median']} ms median "
        f"(best {p['best']}), load {result['load_average_1min']}"
    )
    for name in ALGORITHMS[1:]:
        f = result[str(name)]
        print(
            f"    {name}: {f['extra_ms_median']:+.1f} ms median "
            f"({f['extra_over_plain_median']:+.1%} of the copy), "
            f"best {f['extra_ms_best']:+.1f}, worst {f['extra_ms_worst']:+.1f}"
        )


def main(argv: list[str] | None = None) -> int:
    """Time the copy loop with every digest, here and in the baseline checkout."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--mib", type=int, default=100)
    parser.add_argument("--outdir", type=Path, default=Path("/dev/shm"))
    parser.add_argument("--baseline", type=Path, default=None)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_digest_copy_") as folder:
        source = Path(folder) / "source.bin"
        with open(source, "wb") as f:
            for _ in range(args.mib):
                f.write(os.urandom(1024 * 1024))
        results = []
        for repo in [REPO] if args.baseline is None else [REPO, args.baseline]:
            started = time.perf_counter()
            results.append(run(repo, source, args.outdir, args.rounds))
            results[-1]["seconds"] = round(time.perf_counter() - started, 1)
            _print(results[-1], args.mib)
    write_json(
        args.output,
        {"benchmark": "digest_copy", "mib": args.mib, "rounds": args.rounds, "runs": results},
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
