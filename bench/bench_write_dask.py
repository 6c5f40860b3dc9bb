"""Benchmark: ``create(..., client=...)`` on a 2-worker LocalCluster vs a sequential create.

The dataset is N tiny FILE samples (distinct 16-byte files, a ``cloud``
double each; default 100,000), written as ``--partitions`` parts plus their
TACOCAT, once sequentially (``create(..., partitions=P)``) and once with the
Dask client (same call plus ``client=``), alternating for ``--rounds`` rounds
(which one runs first alternates too: the second finds the sources in the page
cache).
The cluster (``LocalCluster(n_workers=2, threads_per_worker=1,
processes=True)``) is started and its workers import taco_gdal before the first
timing: what is timed is the ``create()`` call only, Taco construction excluded.

After each parallel run the result is compared with the sequential one: the
level tables of every part (ids, metadata, offsets, sizes), COLLECTION.json,
the TACOCAT files, and the bytes of every sample (read at each row's offset).
The speed-up is ``sequential / parallel`` per round; median, best and worst
are reported.  On a 2-core machine shared with other work, expect well under
2x: the client's own work (planning, pickling the parts, committing, the
TACOCAT) is serial, and the two workers share the cores with it.

Run: ``.venv/bin/python bench/bench_write_dask.py [--samples 100000]
[--partitions 8] [--rounds 3]``; writes ``bench/results/write_dask.json``.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

try:
    from bench._common import write_json
except ImportError:  # run as a script
    from _common import write_json  # type: ignore[no-redef]

RESULTS = Path(__file__).resolve().parent / "results" / "write_dask.json"


def _taco(files: Path, n: int) -> Any:
    from taco_gdal.model import Sample, Taco, Tortilla

    samples = [Sample(f"s{i:07d}", files / f"f{i}", cloud=float(i % 100)) for i in range(n)]
    return Taco(
        Tortilla(samples), id="daskbench", dataset_version="1", description="dask benchmark",
        licenses=["CC0-1.0"], providers=[{"name": "bench"}], tasks=["other"],
    )  # fmt: skip


def _sample_bytes(path: Path) -> list[bytes]:
    from taco_gdal.write._sources import read_zip_metadata

    table = read_zip_metadata(path).levels[0]
    out = []
    with open(path, "rb") as f:
        for offset, size in zip(
            table.column("internal:offset").to_pylist(),
            table.column("internal:size").to_pylist(),
            strict=True,
        ):
            f.seek(offset)
            out.append(f.read(size))
    return out


def same_result(a: list[Path], b: list[Path]) -> bool:
    """Every part's tables, COLLECTION and sample bytes equal; TACOCAT files equal."""
    from taco_gdal.write._sources import read_zip_metadata

    if [p.name for p in a] != [p.name for p in b]:
        return False
    for pa_, pb in zip(a, b, strict=True):
        ma, mb = read_zip_metadata(pa_), read_zip_metadata(pb)
        if ma.collection != mb.collection or len(ma.levels) != len(mb.levels):
            return False
        if not all(x.equals(y) for x, y in zip(ma.levels, mb.levels, strict=True)):
            return False
        if _sample_bytes(pa_) != _sample_bytes(pb):
            return False
    return (a[0].parent / "__TACOCAT__").read_bytes() == (b[0].parent / "__TACOCAT__").read_bytes()


def _warm(client: Any) -> None:
    def load() -> int:
        import taco_gdal.write.dask  # noqa: F401

        return os.getpid()

    client.run(load)


def main(argv: list[str] | None = None) -> int:
    """Time sequential vs Dask writes, check equality, print and write the JSON results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)

    from distributed import Client, LocalCluster

    from taco_gdal.write import create

    folder = Path(tempfile.mkdtemp(prefix="bench_write_dask_", dir=args.workdir))
    print(f"load average at start: {os.getloadavg()}", flush=True)
    seq_s: list[float] = []
    par_s: list[float] = []
    equal: list[bool] = []
    loads: list[float] = []
    try:
        files = folder / "files"
        files.mkdir()
        for i in range(args.samples):
            (files / f"f{i}").write_bytes(i.to_bytes(16, "little"))
        taco = _taco(files, args.samples)
        cluster = LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0"
        )
        with Client(cluster) as client:
            _warm(client)
            for r in range(args.rounds):
                loads.append(round(os.getloadavg()[0], 2))
                seq_dir, par_dir = folder / f"seq{r}", folder / f"par{r}"
                seq_dir.mkdir()
                par_dir.mkdir()
                # the order alternates: whichever runs second finds the sources in the
                # page cache, so a fixed order would favour one side every round
                outputs: dict[str, list[Path]] = {}
                for kind in ("seq", "par") if r % 2 == 0 else ("par", "seq"):
                    started = time.perf_counter()
                    outputs[kind] = create(
                        taco, (seq_dir if kind == "seq" else par_dir) / "d.tacozip",
                        partitions=args.partitions, quiet=True,
                        client=client if kind == "par" else None,
                    )  # fmt: skip
                    (seq_s if kind == "seq" else par_s).append(time.perf_counter() - started)
                equal.append(same_result(outputs["par"], outputs["seq"]))
                shutil.rmtree(seq_dir)
                shutil.rmtree(par_dir)
        cluster.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    speedups = [s / p for s, p in zip(seq_s, par_s, strict=True)]
    results = {
        "benchmark": "write_dask",
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "samples": args.samples,
        "partitions": args.partitions,
        "workers": 2,
        "sequential_seconds": [round(s, 3) for s in seq_s],
        "dask_seconds": [round(s, 3) for s in par_s],
        "speedup": {
            "median": round(statistics.median(speedups), 3),
            "best": round(max(speedups), 3),
            "worst": round(min(speedups), 3),
        },
        "identical_to_sequential": equal,
        "load_average_1min": loads,
    }
    print(
        f"{args.samples:,} samples, {args.partitions} parts: sequential {seq_s}  dask {par_s}  "
        f"speed-up median {results['speedup']['median']} (best {results['speedup']['best']}, "
        f"worst {results['speedup']['worst']}); identical: {equal}; load {loads}"
    )
    write_json(args.output, results)
    return 0 if all(equal) else 1


if __name__ == "__main__":
    raise SystemExit(main())
