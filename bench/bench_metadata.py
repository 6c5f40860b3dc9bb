"""Benchmark: build the metadata of 100,000 samples with taco_gdal and with tacotoolbox 0.26.9.

Two shapes, the same fields as the reference timing dataset (``cloud_cover``
double, ``split`` string, ``tile`` int64, ``acq`` timestamp):

* ``flat``:   N FILE samples at level 0.
* ``2level``: N/4 FOLDERs at level 0, each with 4 FILE samples (N FILEs at level 1).

Every FILE points to one small local file (the model stats each path).  Phases:
``samples`` (Sample + Tortilla objects), ``taco`` (Taco(): PIT checks, extent),
``metadata`` (``Taco.metadata()`` / ``MetadataGenerator.generate_all_levels()``),
``total``.  Figures are seconds, and seconds per 10,000 rows (all levels).
taco_gdal runs ``--repeat`` times (best kept), tacotoolbox once.

Run: ``.venv/bin/python bench/bench_metadata.py [--samples 100000] [--reference-samples N]``;
writes ``bench/results/metadata.json``.
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import platform
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

try:
    from bench._common import reference_fields, write_json
except ImportError:  # run as a script: python bench/bench_metadata.py
    from _common import reference_fields, write_json  # type: ignore[no-redef]

CHILDREN = 4
RESULTS = Path(__file__).resolve().parent / "results" / "metadata.json"
COLLECTION: dict[str, Any] = {
    "id": "bench",
    "dataset_version": "1.0.0",
    "description": "metadata benchmark",
    "licenses": ["CC-BY-4.0"],
    "providers": [{"name": "bench"}],
    "tasks": ["classification"],
}


def _build(api: Any, shape: str, n: int, blob: Path, reference: bool) -> tuple[Any, float]:
    """The root Tortilla of ``shape`` with ``n`` FILE samples, and the seconds it took."""
    Sample, Tortilla = api.Sample, api.Tortilla

    def sample(sample_id: str, path: Any, **fields: Any) -> Any:
        return (
            Sample(id=sample_id, path=path, **fields)
            if reference
            else Sample(sample_id, path, **fields)
        )

    started = time.perf_counter()
    if shape == "flat":
        root = Tortilla([sample(f"s{i}", blob, **reference_fields(i)) for i in range(n)])
    else:
        folders = []
        for f in range(n // CHILDREN):
            children = [
                sample(f"b{c}", blob, **reference_fields(f * CHILDREN + c)) for c in range(CHILDREN)
            ]
            folders.append(sample(f"t{f}", Tortilla(children), region=f"r{f % 7}"))
        root = Tortilla(folders)
    return root, time.perf_counter() - started


def _rows(shape: str, n: int) -> int:
    return n if shape == "flat" else n + n // CHILDREN


def _run_ours(shape: str, n: int, blob: Path) -> dict[str, float]:
    import taco_gdal.model as api

    gc.collect()
    root, build = _build(api, shape, n, blob, reference=False)
    started = time.perf_counter()
    taco = api.Taco(root, **COLLECTION)
    checked = time.perf_counter()
    package = taco.metadata()
    done = time.perf_counter()
    assert sum(t.num_rows for t in package.levels) == _rows(shape, n)
    return {"samples": build, "taco": checked - started, "metadata": done - checked}


def _run_reference(shape: str, n: int, blob: Path) -> dict[str, float]:
    from tacotoolbox import datamodel as api
    from tacotoolbox._metadata import MetadataGenerator

    gc.collect()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        root, build = _build(api, shape, n, blob, reference=True)
        started = time.perf_counter()
        taco = api.Taco(tortilla=root, **COLLECTION)
        checked = time.perf_counter()
        package = MetadataGenerator(taco).generate_all_levels()
        done = time.perf_counter()
    assert sum(t.num_rows for t in package.levels) == _rows(shape, n)
    return {"samples": build, "taco": checked - started, "metadata": done - checked}


def _summary(times: dict[str, float], rows: int) -> dict[str, Any]:
    times = {**times, "total": sum(times.values())}
    return {
        "rows": rows,
        "seconds": {k: round(v, 4) for k, v in times.items()},
        "seconds_per_10k_rows": {k: round(v * 10_000 / rows, 4) for k, v in times.items()},
    }


def _best(run: Callable[[], dict[str, float]], repeat: int) -> dict[str, float]:
    runs = [run() for _ in range(repeat)]
    return min(runs, key=lambda r: sum(r.values()))


def _print(shape: str, ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    print(f"\n{shape}: taco_gdal {ours['rows']:,} rows, tacotoolbox {theirs['rows']:,} rows")
    print(f"  {'phase':<10}{'taco_gdal s/10k':>17}{'tacotoolbox s/10k':>19}{'ratio':>9}")
    for phase, mine in ours["seconds_per_10k_rows"].items():
        other = theirs["seconds_per_10k_rows"][phase]
        ratio = other / mine if mine else float("inf")
        print(f"  {phase:<10}{mine:>17.4f}{other:>19.4f}{ratio:>8.1f}x")


def main(argv: list[str] | None = None) -> int:
    """Run both shapes with both tools, print a table, write the JSON results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--reference-samples", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    n = args.samples - args.samples % CHILDREN
    n_ref = (args.reference_samples or n) - (args.reference_samples or n) % CHILDREN

    import pandas  # noqa: F401 - pyarrow imports it for datetimes; keep it out of the timings

    results: dict[str, Any] = {
        "benchmark": "metadata",
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "samples": n,
        "reference_samples": n_ref,
        "repeat": args.repeat,
        "load_average_at_start": [round(v, 2) for v in os.getloadavg()],
        "shapes": {},
    }
    with tempfile.TemporaryDirectory() as folder:
        blob = Path(folder) / "sample.bin"
        blob.write_bytes(b"x" * 622)
        _run_ours("flat", 1_000, blob)  # warm-up: imports, caches
        for shape in ("flat", "2level"):
            ours = _summary(
                _best(functools.partial(_run_ours, shape, n, blob), args.repeat), _rows(shape, n)
            )
            theirs = _summary(_run_reference(shape, n_ref, blob), _rows(shape, n_ref))
            ratio = {
                phase: round(theirs["seconds_per_10k_rows"][phase] / value, 2) if value else None
                for phase, value in ours["seconds_per_10k_rows"].items()
            }
            results["shapes"][shape] = {
                "taco_gdal": ours,
                "tacotoolbox_0_26_9": theirs,
                "speedup_per_row": ratio,
            }
            _print(shape, ours, theirs)
    results["load_average_at_end"] = [round(v, 2) for v in os.getloadavg()]
    print()
    write_json(args.output, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
