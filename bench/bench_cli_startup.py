"""Start-up cost of the ``taco`` command: what a shell user waits for before any work.

Runs, interleaved over several rounds, the installed ``taco`` with ``--help``,
``ls --help``, ``open`` (load metadata, print one path), ``info`` and ``ls`` on
small datasets of several sizes, plus ``python -c pass`` and ``gdalinfo
--version`` as floors.  Prints best, median and worst wall time and the CPU time (user + sys of the
child, less sensitive to a busy machine) per command.  Nothing is asserted.

Usage: ``.venv/bin/python -m bench.bench_cli_startup [--rounds 5] [--sizes 10,1000]``
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TACO = str(Path(sys.executable).parent / "taco")


def _dataset(root: Path, n: int) -> Path:
    import numpy as np
    import rasterio
    from rasterio.transform import from_origin

    from taco_gdal.model import Sample, Taco, Tortilla
    from taco_gdal.write import create

    tif = root / "one.tif"
    with rasterio.open(
        tif, "w", driver="GTiff", width=8, height=8, count=1, dtype="uint8",
        crs="EPSG:4326", transform=from_origin(0, 1, 0.1, 0.1),
    ) as dst:  # fmt: skip
        dst.write(np.ones((1, 8, 8), dtype=np.uint8))
    samples = [Sample(f"s{i:06d}", tif, cloud_cover=float(i % 100)) for i in range(n)]
    taco = Taco(
        Tortilla(samples), id=f"bench_{n}", dataset_version="1", description="bench",
        licenses=["other"], providers=[{"name": "bench"}], tasks=["other"],
    )  # fmt: skip
    return create(taco, root / f"bench_{n}.tacozip", quiet=True)[0]


def _time(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU (user + sys of the child) seconds of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {proc.stderr.decode()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sizes", default="10,1000,20000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        datasets = {n: _dataset(Path(tmp), n) for n in sizes}
        commands: dict[str, list[str]] = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "gdalinfo --version": ["gdalinfo", "--version"],
            "taco --help": [TACO, "--help"],
            "taco ls --help": [TACO, "ls", "--help"],
        }
        for n, path in datasets.items():
            commands[f"taco open ({n} samples)"] = [TACO, "open", str(path), "s000001"]
            commands[f"taco info ({n} samples)"] = [TACO, "info", str(path)]
            commands[f"taco ls -f csv ({n} samples)"] = [TACO, "ls", str(path), "-f", "csv"]
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(args.rounds):  # interleaved: every command once per round
            for name, argv in commands.items():
                times[name].append(_time(argv))
    width = max(len(n) for n in times)
    load = os.getloadavg()[0]
    print(f"load average (1 min) at the end: {load:.1f}; {args.rounds} rounds, interleaved")
    print(f"{'command':<{width}}  wall best  median   worst   CPU best  worst")
    for name, values in times.items():
        wall = [w for w, _ in values]
        cpu = [c for _, c in values]
        print(
            f"{name:<{width}}  {min(wall):9.3f}  {statistics.median(wall):6.3f}  "
            f"{max(wall):6.3f}   {min(cpu):8.3f}  {max(cpu):5.3f}"
        )


if __name__ == "__main__":
    main()
