"""How long a TACO ZIP write waits for its SHA-256 digests after its last sample.

``create()`` copies the samples, then writes the level tables, whose digest
column needs every digest: what the digest thread has left when the last
sample is copied is wall time the write cannot hide.  This times, in a fresh
process per write, the whole ``create()``, when the last sample's copy
returned, and the writer's first wait for the digests
(:meth:`~taco_gdal.write._late.LateDigests.wait`: when it starts, after the
level tables are built, and how long it lasts), for one or more checkouts
(``--tree``) interleaved in random order, round after round::

    python bench/bench_digest_tail.py --tree /tmp/T_old --tree /tmp/T_new --rounds 5

Each tree is a folder holding a ``taco_gdal`` package (``git archive <rev>
taco_gdal`` plus the built ``.so`` files).  The sources are written once to
``--workdir`` (tmpfs by default), ``--files`` of ``--mib`` MiB.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    from bench.bench_write_throughput import make_sources
except ImportError:  # run as a script: bench/ is on sys.path
    from bench_write_throughput import make_sources  # type: ignore[no-redef]

_CHILD = r"""
import json, mmap, sys, time
from pathlib import Path
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.write import create, zipstream
try:  # the late digests' own module since the nineteenth session
    from taco_gdal.write import _late
except ImportError:
    from taco_gdal.write import _copy as _late

waits = []
wait = _late.LateDigests.wait

def timed(self):
    started = time.perf_counter()
    wait(self)
    waits.append((started, time.perf_counter()))

_late.LateDigests.wait = timed
copied = []
add_file = zipstream.ZipWriter.add_file

def add_timed(self, name, *args, **kwargs):
    info = add_file(self, name, *args, **kwargs)
    if name.startswith("DATA/"):
        copied.append(time.perf_counter())
    return info

zipstream.ZipWriter.add_file = add_timed
pages = mmap.mmap(-1, int(sys.argv[3]))  # untimed: the pages the output is about to take
for offset in range(0, len(pages), mmap.PAGESIZE):
    pages[offset] = 1
pages.close()
sources = sorted(Path(sys.argv[1]).iterdir())
taco = Taco(
    Tortilla([Sample(p.stem, p) for p in sources]), id="tail", dataset_version="1",
    description="digest tail", licenses=["CC0-1.0"], providers=[{"name": "bench"}],
    tasks=["other"],
)
time.sleep(0.2)
started = time.perf_counter()
create(taco, sys.argv[2], split_size=None, quiet=True, checksum="sha256")
ended = time.perf_counter()
first = waits[0] if waits else (ended, ended)
print(json.dumps({
    "seconds": ended - started,
    "samples_seconds": copied[-1] - started,
    "until_wait_seconds": first[0] - copied[-1],
    "wait_seconds": first[1] - first[0],
}))
"""


def _run(tree: Path, sources: Path, out: Path, prefault: int) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    command = [sys.executable, "-c", _CHILD, str(sources), str(out), str(prefault)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    out.unlink(missing_ok=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, action="append", required=True)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--mib", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workdir", type=Path, default=Path("/dev/shm"))
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    folder = Path(tempfile.mkdtemp(prefix="bench_digest_tail_", dir=args.workdir))
    try:
        sources = folder / "src"
        make_sources(sources, args.files, args.mib << 20)
        prefault = (args.files * args.mib + 64) << 20
        runs: dict[str, list[dict[str, float]]] = {str(t): [] for t in args.tree}
        for round_ in range(args.rounds):
            order = list(args.tree)
            rng.shuffle(order)
            for tree in order:
                result = _run(tree, sources, folder / "out.tacozip", prefault)
                runs[str(tree)].append(result)
                print(
                    f"round {round_} {tree}: {result['seconds']:.3f} s, samples copied at "
                    f"{result['samples_seconds']:.3f} s, the wait for the digests "
                    f"{result['until_wait_seconds'] * 1000:.1f} ms later, "
                    f"{result['wait_seconds'] * 1000:.1f} ms long",
                    flush=True,
                )
    finally:
        shutil.rmtree(folder)
    summary = {
        tree: {
            "median_seconds": statistics.median(r["seconds"] for r in results),
            "median_samples_seconds": statistics.median(r["samples_seconds"] for r in results),
            "median_until_wait_ms": 1000
            * statistics.median(r["until_wait_seconds"] for r in results),
            "median_wait_ms": 1000 * statistics.median(r["wait_seconds"] for r in results),
            "wait_ms": [round(1000 * r["wait_seconds"], 2) for r in results],
        }
        for tree, results in runs.items()
    }
    for tree, row in summary.items():
        print(
            f"{tree}: create {row['median_seconds']:.3f} s median, samples copied at "
            f"{row['median_samples_seconds']:.3f} s, the wait {row['median_until_wait_ms']:.1f} "
            f"ms later, {row['median_wait_ms']:.1f} ms long (medians; each: {row['wait_ms']})"
        )
    if args.output is not None:
        args.output.write_text(
            json.dumps(
                {"set": f"{args.files} x {args.mib} MiB", "runs": runs, "summary": summary},
                indent=2,
            )
            + "\n"
        )
        print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
