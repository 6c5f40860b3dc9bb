"""Reader pace against tacoreader 2.4.21 on many shapes: warm load, first load, navigation.

Both readers run in one process, interleaved round by round (the order flips every
round), on the same files:

* *first load*: the first ``load(path)`` of a shape in this process (imports done);
* *warm load*: the median of ``--loads`` further ``load(path)`` calls, per round;
* *navigation*: ``ds.read(i).read(j).read(k)`` (as deep as the shape goes) for
  ``--hops`` random index chains, per round; both chains end at a GDAL path, and
  the two readers' paths are checked to name the same bytes (``offset_size``).

Shapes (cached under ``--cache``; the cascades and the FOLDER / TACOCAT ones are
written by taco_gdal's writer with real ``__meta__`` members, because tacoreader
navigates by reading them):

* ``c1k-10-10``, ``c10k-4-4``, ``c100-100-10``: 3-level cascades (roots x
  children x grandchildren), ZIP, one ``cloud`` column;
* ``c1k-10-10-wide``: 32 metadata columns at every level;
* ``c1k-10-10-stac``: ``stac:centroid`` and ``stac:time_start`` at every level;
* ``c1k-10-10-folder``: the FOLDER container; ``c1k-10-10-cat``: a TACOCAT of parts;
* ``flat-10k``: tacotoolbox's 10k sample ZIP (:func:`bench.bench_read_datasets.make_10k`);
* ``flat-100k``, ``flat-1m``: metadata-only ISTAC ZIPs of :mod:`bench.scale.datasets`;
* ``meta-1m``, ``meta-cascade``: the metadata-only ZIPs of ``bench_read_datasets``
  (load only: their ``__meta__`` is a stub tacoreader cannot navigate).

Ratios are tacoreader seconds / taco_gdal seconds (above 1: taco_gdal is faster);
reported per shape as the median over rounds and the worst round.

Run: ``python -m bench.bench_pace [--shapes c1k-10-10 flat-1m ...] [--rounds 5]``;
writes ``bench/results/bench_pace.json``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from bench._common import write_json
from bench.bench_read_datasets import (
    CASCADE,
    MILLION,
    make_10k,
    make_metadata_zip,
    prepare_tacoreader,
)

CACHE = Path(tempfile.gettempdir()) / "taco_gdal_bench_pace"
RESULTS = Path(__file__).resolve().parent / "results" / "bench_pace.json"
WIDE = 32


def _extra(kind: str, i: int) -> dict[str, Any]:
    if kind == "wide":
        out: dict[str, Any] = {}
        for c in range(WIDE):
            value = i * 31 + c
            if c % 4 == 0:
                out[f"m{c:02d}"] = float(value % 997) / 7.0
            elif c % 4 == 1:
                out[f"m{c:02d}"] = value % 1013
            elif c % 4 == 2:
                out[f"m{c:02d}"] = ("S2A", "S2B", "L8", "L9")[value % 4]
            else:
                out[f"m{c:02d}"] = bool(value % 2)
        return out
    if kind == "stac":
        import shapely

        rng = random.Random(i)
        point = shapely.Point(rng.uniform(-180, 180), rng.uniform(-80, 80))
        return {
            "stac:centroid": point.wkb,
            "stac:time_start": datetime(2020, 1, 1) + timedelta(minutes=i),
        }
    return {}


def _cascade(
    name: str, fan: tuple[int, int, int], kind: str = "", container: str = "zip", parts: int = 1
) -> Path:
    """A real 3-level cascade written by taco_gdal (cached)."""
    folder = CACHE / name
    # a TACOCAT opens as the folder holding its parts and __TACOCAT__
    target = folder if container == "cat" else folder / f"{name}{'.tacozip' * (container == 'zip')}"
    if (folder / "__TACOCAT__").exists() if container == "cat" else target.exists():
        return target
    from taco_gdal.model import Sample, Taco, Tortilla
    from taco_gdal.write import create

    folder.mkdir(parents=True, exist_ok=True)
    blob = folder / "blob.bin"
    blob.write_bytes(b"taco_gdal bench!")
    roots_n, mid_n, leaf_n = fan
    mid_ids = [f"m{j}" for j in range(mid_n)]
    leaf_ids = [f"b{k}" for k in range(leaf_n)]
    roots, serial = [], 0
    for i in range(roots_n):
        mids = []
        for j in range(mid_n):
            leaves = []
            for k in range(leaf_n):
                leaves.append(Sample(leaf_ids[k], blob, cloud=float(k), **_extra(kind, serial)))
                serial += 1
            mids.append(Sample(mid_ids[j], Tortilla(leaves), cloud=float(j), **_extra(kind, j)))
        roots.append(Sample(f"t{i:06d}", Tortilla(mids), cloud=float(i % 100), **_extra(kind, i)))
    taco = Taco(
        Tortilla(roots),
        id=name.replace("-", "_"),
        dataset_version="1.0.0",
        description="reader pace benchmark",
        licenses=["CC-BY-4.0"],
        providers=[{"name": "bench"}],
        tasks=["classification"],
    )
    if container == "cat":
        size = roots_n * mid_n * leaf_n * len(blob.read_bytes()) // parts + 1
        create(taco, folder / f"{name}.tacozip", split_size=size, quiet=True)
    else:
        create(taco, target, output_format=container, split_size=None, quiet=True)
    blob.unlink()
    if not target.exists() or (container == "cat" and not (folder / "__TACOCAT__").exists()):
        raise SystemExit(f"{name}: the writer made no {target}")
    return target


def _scale_flat(rows: int) -> Path:
    from bench.scale import datasets

    return datasets.flat(rows)


SHAPES: dict[str, tuple[Callable[[], Path], int]] = {
    "c1k-10-10": (lambda: _cascade("c1k-10-10", (1000, 10, 10)), 3),
    "c10k-4-4": (lambda: _cascade("c10k-4-4", (10_000, 4, 4)), 3),
    "c100-100-10": (lambda: _cascade("c100-100-10", (100, 100, 10)), 3),
    "c1k-10-10-wide": (lambda: _cascade("c1k-10-10-wide", (1000, 10, 10), "wide"), 3),
    "c1k-10-10-stac": (lambda: _cascade("c1k-10-10-stac", (1000, 10, 10), "stac"), 3),
    "c1k-10-10-folder": (
        lambda: _cascade("c1k-10-10-folder", (1000, 10, 10), container="folder"),
        3,
    ),
    "c1k-10-10-cat": (
        lambda: _cascade("c1k-10-10-cat", (1000, 10, 10), container="cat", parts=4),
        3,
    ),
    "flat-10k": (make_10k, 1),
    "flat-100k": (lambda: _scale_flat(100_000), 1),
    "flat-1m": (lambda: _scale_flat(1_000_000), 1),
    "meta-1m": (lambda: make_metadata_zip("million", MILLION), 0),
    "meta-cascade": (lambda: make_metadata_zip("cascade", CASCADE), 0),
}


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def _sizes(ds: Any, depth: int, rng: random.Random, hops: int) -> list[tuple[int, ...]]:
    """Random valid index chains (sizes from the first load's level-0 frame and children)."""
    chains = []
    n0 = len(ds.data)
    for _ in range(hops):
        i = rng.randrange(n0)
        chain = [i]
        node = ds.read(i)
        for _level in range(1, depth):
            k = rng.randrange(len(node))
            chain.append(k)
            node = node.read(k)
        chains.append(tuple(chain))
    return chains


def _navigate(ds: Any, chains: list[tuple[int, ...]]) -> list[Any]:
    out = []
    for chain in chains:
        node = ds
        for k in chain:
            node = node.read(k)
        out.append(node)
    return out


def _tail(path: Any) -> str:
    """What a navigation result names: ``offset_size`` of a subfile, else the file itself."""
    text = str(path)
    if text.startswith("/vsisubfile/"):
        return text.split(",", 1)[0].rsplit("/", 1)[-1]
    if Path(text).is_file():
        return str(Path(text).resolve())
    raise SystemExit(f"navigation ended at {text!r}, not a GDAL path")


def _ratio(ref: list[float], ours: list[float]) -> dict[str, float]:
    ratios = [r / o for r, o in zip(ref, ours, strict=True)]
    return {
        "median": statistics.median(ratios),
        "worst": min(ratios),
        "ours_ms": statistics.median(ours) * 1e3,
        "ref_ms": statistics.median(ref) * 1e3,
    }


def run_shape(name: str, rounds: int, loads: int, hops: int, seed: int) -> dict[str, Any]:
    """Interleaved measurements of one shape; ratios per round."""
    import tacoreader

    import taco_gdal

    make, depth = SHAPES[name]
    path = str(make())
    readers = {"taco_gdal": taco_gdal.load, "tacoreader": tacoreader.load}
    first: dict[str, float] = {}
    datasets: dict[str, Any] = {}
    for reader, load in readers.items():
        first[reader], datasets[reader] = _timed(lambda load=load: load(path))
    chains = _sizes(datasets["taco_gdal"], depth, random.Random(seed), hops) if depth else []
    if chains:
        ours = [_tail(p) for p in _navigate(datasets["taco_gdal"], chains)]
        theirs = [_tail(p) for p in _navigate(datasets["tacoreader"], chains)]
        if ours != theirs:
            raise SystemExit(f"{name}: the readers' navigation ends at different bytes")
    warm: dict[str, list[float]] = {r: [] for r in readers}
    nav: dict[str, list[float]] = {r: [] for r in readers}
    for round_ in range(rounds):
        order = list(readers) if round_ % 2 == 0 else list(reversed(readers))
        for reader in order:
            times = [_timed(lambda r=reader: readers[r](path))[0] for _ in range(loads)]
            warm[reader].append(statistics.median(times))
        for reader in order:
            if chains:
                nav[reader].append(_timed(lambda r=reader: _navigate(datasets[r], chains))[0])
    out = {
        "path": path,
        "first_load": {
            "ratio": first["tacoreader"] / first["taco_gdal"],
            "ours_ms": first["taco_gdal"] * 1e3,
            "ref_ms": first["tacoreader"] * 1e3,
        },
        "warm_load": _ratio(warm["tacoreader"], warm["taco_gdal"]),
    }
    if chains:
        out["navigation"] = _ratio(nav["tacoreader"], nav["taco_gdal"])
    return out


def _row(name: str, result: dict[str, Any]) -> str:
    w, f = result["warm_load"], result["first_load"]
    text = (
        f"{name:18} warm {w['median']:5.2f}x (worst {w['worst']:5.2f}x; "
        f"{w['ours_ms']:7.1f} vs {w['ref_ms']:7.1f} ms)  first {f['ratio']:5.2f}x"
    )
    if "navigation" in result:
        n = result["navigation"]
        text += f"  nav {n['median']:5.2f}x (worst {n['worst']:5.2f}x)"
    return text


def main(argv: list[str] | None = None) -> None:
    """Measure the shapes asked for and write the JSON results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", nargs="*", default=list(SHAPES), choices=list(SHAPES))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--loads", type=int, default=3, help="warm loads per round")
    parser.add_argument("--hops", type=int, default=50, help="navigation chains per round")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    prepare_tacoreader()
    import tacoreader  # noqa: F401  (imports outside the first-load timing)

    import taco_gdal  # noqa: F401

    results = {}
    for name in args.shapes:
        results[name] = run_shape(name, args.rounds, args.loads, args.hops, args.seed)
        print(_row(name, results[name]), flush=True)
    write_json(RESULTS, {"rounds": args.rounds, "shapes": results})


if __name__ == "__main__":
    main()
