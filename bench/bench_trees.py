"""Two or more source trees of taco_gdal (or tacoreader) on the same work, interleaved.

Every run is a fresh process whose ``PYTHONPATH`` is one tree (``NAME=DIR``; the
plain word ``tacoreader`` for the reference reader), and every round runs each
variant once in an order drawn at random for that round, so a slow minute of a
shared machine falls on all variants alike.  Imports are not timed.

Workloads:

* ``read1m``: 1,000,000 FILE rows at level 0 (``bench_read_datasets.MILLION``):
  first ``load()`` in the process, warm ``load()``, a bbox + datetime filter
  and its ``.data``;
* ``cascade``: three levels of 100k / 400k / 1.2M rows: the same loads, and
  bbox and datetime filters at level 2;
* ``write``: ``create()`` of the sets of ``--sets`` (``8x256`` = 8 files of
  256 MiB, ``10000x16k`` = 10,000 of 16 KiB) under ``--workdir`` with every
  digest of ``--checksums``, beside ``sha256sum`` and a ``hashlib`` loop over
  the same source bytes.  The output is deleted and ``sync`` run before each run.

Each figure is the median over the rounds; ratios are per-round pairs
(``ratio = other / first tree``, so above 1 means the first tree is faster),
given as the median and the worst round.  Results go to ``bench/results/``
(not tracked).

Run (from the repository root)::

    .venv/bin/python -m bench.bench_trees --tree new=. --tree old=../old \\
        --rounds 5 read1m cascade
    .venv/bin/python -m bench.bench_trees --tree new=. --tree old=../old \\
        --sets 20x100,10000x16k --checksums none,crc32c,xxh3,sha256 \\
        --workdir /dev/shm/bench write
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
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.bench_read_datasets import CASCADE, MILLION, make_metadata_zip, prepare_tacoreader

RESULTS = Path(__file__).resolve().parent / "results"
MIB = 1024 * 1024

_READ = r"""
import importlib, json, statistics, sys, time
name, path, level, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
reader = importlib.import_module("taco_gdal.read" if name == "taco_gdal" else name)
box, span = (-10.0, 35.0, 10.0, 45.0), sys.argv[5]

def timed(fn):
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result

first, ds = timed(lambda: reader.load(path))
out = {"first_load": first}
out["warm_load"] = statistics.median(timed(lambda: reader.load(path))[0] for _ in range(repeat))
if level == 0:
    work = lambda: ds.filter_bbox(*box).filter_datetime(span).data
    work()
    out["bbox_datetime"] = statistics.median(timed(work)[0] for _ in range(repeat))
else:
    for key, work in (
        ("bbox_level2", lambda: ds.filter_bbox(*box, level=2).data),
        ("datetime_level2", lambda: ds.filter_datetime(span, level=2).data),
    ):
        rows = len(work())
        out[key] = statistics.median(timed(work)[0] for _ in range(repeat))
        out[key + "_rows"] = rows
print(json.dumps(out))
"""

_WRITE = r"""
import json, sys, time
from pathlib import Path
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.write import create
sources = sorted(Path(sys.argv[1]).iterdir())
taco = Taco(
    Tortilla([Sample(p.stem, p) for p in sources]),
    id="trees", dataset_version="1", description="tree comparison",
    licenses=["CC0-1.0"], providers=[{"name": "bench"}], tasks=["other"],
)
started = time.perf_counter()
create(taco, sys.argv[2], split_size=None, quiet=True, checksum=sys.argv[3] or None)
print(json.dumps({"seconds": time.perf_counter() - started}))
"""

_HASHLIB = r"""
import hashlib, json, sys, time
from pathlib import Path
sources = sorted(Path(sys.argv[1]).iterdir())
started = time.perf_counter()
for path in sources:
    with open(path, "rb") as f:
        hashlib.file_digest(f, "sha256")
print(json.dumps({"seconds": time.perf_counter() - started}))
"""


def _child(tree: str, code: str, *args: str) -> dict[str, float]:
    env = dict(os.environ)
    cwd = "/"
    if tree != "tacoreader":
        root = Path(tree).resolve()
        env["PYTHONPATH"] = f"{root}:{root / 'plugins'}"
        cwd = str(root)
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _summary(runs: dict[str, list[dict[str, float]]], first: str) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for name, rows in runs.items():
        keys = [k for k in rows[0] if not k.endswith("_rows")]
        summary[name] = {k: statistics.median(r[k] for r in rows) for k in keys}
        if name != first:
            for k in keys:
                ratios = [r[k] / f[k] for r, f in zip(rows, runs[first], strict=True)]
                summary[name][k + "_ratio"] = statistics.median(ratios)
                summary[name][k + "_ratio_worst"] = min(ratios)
    return summary


def bench_read(trees: dict[str, str], workload: str, rounds: int, rng: random.Random) -> Any:
    prepare_tacoreader()
    if workload == "read1m":
        path, level, span = make_metadata_zip("million", MILLION), 0, "2021-01-01/2021-12-31"
    else:
        path, level, span = make_metadata_zip("cascade", CASCADE), 2, "2021-03-01/2021-03-02"
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for _ in range(rounds):
        order = list(trees)
        rng.shuffle(order)
        for name in order:
            module = "tacoreader" if trees[name] == "tacoreader" else "taco_gdal"
            runs[name].append(_child(trees[name], _READ, module, str(path), str(level), "3", span))
    return _summary(runs, next(iter(trees)))


def _sources(workdir: Path, files: int, size: int) -> Path:
    folder = workdir / f"src-{files}x{size}"
    if folder.exists() and len(list(folder.iterdir())) == files:
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    block = np.random.default_rng(0).integers(0, 256, size, dtype=np.uint8).tobytes()
    for i in range(files):
        (folder / f"s{i:05d}.bin").write_bytes(i.to_bytes(8, "little") + block[8:])
    return folder


def _timed_command(command: list[str]) -> dict[str, float]:
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return {"seconds": time.perf_counter() - started}


def bench_write(
    trees: dict[str, str],
    sets: list[str],
    checksums: list[str],
    workdir: Path,
    rounds: int,
    rng: random.Random,
) -> Any:
    results = {}
    for text in sets:
        files, size = text.split("x")
        nbytes = int(size[:-1]) * 1024 if size.endswith("k") else int(size) * MIB
        sources = _sources(workdir, int(files), nbytes)
        names = sorted(str(p) for p in sources.iterdir())
        variants: dict[str, Any] = {"sha256sum": None, "hashlib": None}
        for tree in trees:
            for checksum in checksums:
                variants[f"{tree}:{checksum}"] = (tree, checksum)
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in variants}
        for _ in range(rounds):
            order = list(variants)
            rng.shuffle(order)
            for name in order:
                out = workdir / "out.tacozip"
                out.unlink(missing_ok=True)
                os.sync()
                if name == "sha256sum":
                    runs[name].append(_timed_command(["sha256sum", *names]))
                elif name == "hashlib":
                    runs[name].append(_child(str(Path.cwd()), _HASHLIB, str(sources)))
                else:
                    tree, checksum = variants[name]
                    digest = "" if checksum == "none" else checksum
                    runs[name].append(_child(trees[tree], _WRITE, str(sources), str(out), digest))
        medians = {
            name: statistics.median(r["seconds"] for r in rows) for name, rows in runs.items()
        }
        pairs: dict[str, Any] = {}
        first = next(iter(trees))
        for tree in trees:
            plain = runs[f"{tree}:none"]
            for checksum in checksums:
                rows = runs[f"{tree}:{checksum}"]
                extra = [r["seconds"] / p["seconds"] - 1 for r, p in zip(rows, plain, strict=True)]
                entry = {"over_plain": statistics.median(extra), "over_plain_worst": max(extra)}
                if tree != first:
                    mine = runs[f"{first}:{checksum}"]
                    ratio = [r["seconds"] / m["seconds"] for r, m in zip(rows, mine, strict=True)]
                    entry["ratio_to_first"] = statistics.median(ratio)
                    entry["ratio_to_first_worst"] = min(ratio)
                pairs[f"{tree}:{checksum}"] = entry
        results[text] = {
            "median_seconds": medians,
            "pairs": pairs,
            "seconds": {name: [r["seconds"] for r in rows] for name, rows in runs.items()},
            "workdir": str(workdir),
        }
        shutil.rmtree(sources)
    return results


def main() -> None:
    """Parse the command line, run the chosen workloads, print and save the summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workloads", nargs="+", choices=["read1m", "cascade", "write"])
    parser.add_argument(
        "--tree", action="append", required=True, help="NAME=DIR or NAME=tacoreader"
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sets", default="8x256")
    parser.add_argument("--checksums", default="none")
    parser.add_argument("--workdir", type=Path, default=Path("/var/tmp/taco_bench_trees"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--output", type=Path, default=RESULTS / "trees.json")
    args = parser.parse_args()
    trees = dict(spec.split("=", 1) for spec in args.tree)
    rng = random.Random(args.seed)
    report: dict[str, Any] = {"trees": trees, "rounds": args.rounds, "load": os.getloadavg()}
    for workload in args.workloads:
        if workload == "write":
            args.workdir.mkdir(parents=True, exist_ok=True)
            checksums = args.checksums.split(",")
            if "none" not in checksums:
                checksums.insert(0, "none")
            report[workload] = bench_write(
                trees, args.sets.split(","), checksums, args.workdir, args.rounds, rng
            )
        else:
            report[workload] = bench_read(trees, workload, args.rounds, rng)
        print(json.dumps({workload: report[workload]}, indent=1))
    report["load_after"] = os.getloadavg()
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=1) + "\n")
    print("wrote", args.output)


if __name__ == "__main__":
    main()
