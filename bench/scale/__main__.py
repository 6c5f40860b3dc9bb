"""Reader scaling table: ``python -m bench.scale [--sizes ...] [--big N] [--rounds R]``.

For each size, both readers (taco_gdal and tacoreader 2.4.21) run every
measure of :mod:`bench.scale.worker` in a fresh subprocess; the readers take
turns round by round (taco_gdal first on even rounds, tacoreader first on odd
ones), and each cell is the median over rounds.  The ``--big`` size (10M by
default) runs taco_gdal alone (``--big-ops``: warm load and filter by default).

Ratios are *reference / taco_gdal* for times (above 1: taco_gdal is faster)
and *taco_gdal / reference* for memory (below 1: taco_gdal uses less).  The
slope per 10x is the least-squares slope of log10(median) against log10(size);
"worst paired" is the worst ratio of one round's two runs (same round,
adjacent in time).

``--tree DIR`` measures the taco_gdal package found in ``DIR`` (e.g. a
``git archive`` of an older commit) instead of this checkout; ``--label``
names the output files ``bench/results/scale[-label].json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import compileall
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.bench_read_datasets import machine, prepare_tacoreader
from bench.scale import datasets

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results"
READERS = ("taco_gdal", "tacoreader")
ROWS: list[tuple[str, str, str, str]] = [
    # (label, measure, key, kind)
    ("cold: import + load + .data", "cold", "seconds", "time"),
    ("warm load", "warm", "load", "time"),
    ("first .data after load", "warm", "data", "time"),
    (".data again, same dataset", "warm", "data_again", "time"),
    ("bbox + datetime filter, warm", "warm", "filter", "time"),
    ("bbox + datetime filter, first after load", "warm", "first_filter", "time"),
    ("navigation: read() of a FOLDER", "nav", "nav", "time"),
    ("peak RSS above imports (load + .data)", "rss", "peak_above_imports_mb", "memory"),
    ("peak RSS above a 3k-row warm-up (load + .data)", "rss_warm", "peak_above_warm_mb", "memory"),
]


def _run(measure: str, reader: str, path: Path, tree: Path, extra: list[str]) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=f"{tree}{os.pathsep}{ROOT}")
    command = [sys.executable, "-m", "bench.scale.worker", measure, reader, str(path), *extra]
    done = subprocess.run(
        command, env=env, cwd="/", capture_output=True, text=True, timeout=3600, check=False
    )
    if done.returncode:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _measures(size: int, big: bool, args: argparse.Namespace) -> list[tuple[str, Path, list[str]]]:
    flat = datasets.flat(size)
    repeat = ["--repeat", str(args.repeat)]
    if big:
        out = [("warm", flat, [*repeat, "--ops", args.big_ops])]
        out += [(m, flat, []) for m in args.big_extra.split(",") if m]
        return out
    every = [
        ("cold", flat, []),
        ("warm", flat, repeat),
        ("nav", datasets.cascade(size), ["--repeat", str(args.nav_calls)]),
        ("rss", flat, []),
        ("rss_warm", flat, ["--warm-up", str(datasets.flat(3000))]),
    ]
    return [m for m in every if m[0] in args.measures.split(",")]


def _compile(tree: Path) -> None:
    """Byte-compile the taco_gdal tree under test, as ``pip install`` does for tacoreader.

    Without this a shell with ``PYTHONDONTWRITEBYTECODE`` set makes every cold
    run compile taco_gdal's sources (about 0.13 s) while the reference, an
    installed package, loads its ``.pyc`` files: not the same work.
    """
    for package in [tree / "taco_gdal", *sorted((tree / "plugins").glob("*/"))]:
        if package.is_dir():
            compileall.compile_dir(str(package), quiet=1)


def _read_through(path: Path) -> None:
    """Read every byte of ``path`` once, so that no reader's first round pays the disk.

    Without this the reader that runs first in round 0 (taco_gdal) reads the
    dataset from disk when other work evicted it from the page cache, and the
    other reader then finds it cached.
    """
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for file in files:
        with file.open("rb") as f:
            while f.read(16 * 1024 * 1024):
                pass


def _collect(args: argparse.Namespace) -> dict[str, Any]:
    _compile(args.tree)
    runs: dict[str, Any] = {}
    sizes = [(n, False) for n in args.sizes] + ([(args.big, True)] if args.big else [])
    for size, big in sizes:
        start = time.perf_counter()
        measures = _measures(size, big, args)
        print(f"size {size:,}: datasets ready in {time.perf_counter() - start:.1f} s", flush=True)
        cell: dict[str, Any] = {"parquet_bytes": datasets.parquet_bytes(datasets.flat(size))}
        readers = ("taco_gdal",) if big else READERS
        for measure, path, extra in measures:
            _read_through(path)
            per_reader: dict[str, list[dict[str, Any]]] = {r: [] for r in readers}
            for round_ in range(1 if big else args.rounds):
                order = readers if round_ % 2 == 0 else tuple(reversed(readers))
                for reader in order:
                    try:
                        result = _run(measure, reader, path, args.tree, extra)
                    except (RuntimeError, subprocess.TimeoutExpired) as exc:
                        cell.setdefault("errors", []).append(f"{measure} {reader}: {exc}"[-2000:])
                        print(f"  {measure:5} {reader:10} round {round_}: FAILED", flush=True)
                        continue
                    per_reader[reader].append(result)
                    print(f"  {measure:5} {reader:10} round {round_}: {_brief(result)}", flush=True)
            cell[measure] = per_reader
        runs[str(size)] = cell
        partial = RESULTS / f"scale{'-' + args.label if args.label else ''}.partial.json"
        partial.write_text(json.dumps(runs, indent=2) + "\n")
    return runs


def _brief(result: dict[str, Any]) -> str:
    return ", ".join(
        f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
        for k, v in result.items()
        if k not in ("module", "filter_ids")
    )


def _median(runs: dict[str, Any], size: str, measure: str, reader: str, key: str) -> float | None:
    values = [r[key] for r in runs.get(size, {}).get(measure, {}).get(reader, []) if key in r]
    return statistics.median(values) if values else None


def _paired_worst(
    runs: dict[str, Any], size: str, measure: str, key: str, kind: str
) -> float | None:
    cell = runs.get(size, {}).get(measure, {})
    ours, ref = cell.get("taco_gdal", []), cell.get("tacoreader", [])
    ratios = [_ratio(a[key], b[key], kind) for a, b in zip(ours, ref, strict=False)]
    return min(ratios) if ratios else None


def _ratio(ours: float, ref: float, kind: str) -> float:
    """reference / taco_gdal: above 1 favours taco_gdal, for seconds and MiB alike."""
    del kind  # the same orientation for both kinds keeps "worst" = smallest
    return ref / ours


def _slope(points: list[tuple[int, float]]) -> float | None:
    if len(points) < 2:
        return None
    xs = [math.log10(n) for n, _ in points]
    ys = [math.log10(max(v, 1e-9)) for _, v in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )


def summarise(runs: dict[str, Any]) -> dict[str, Any]:
    """Medians, ratios, slopes, worst and best of every row of the table."""
    sizes = list(runs)
    rows: dict[str, Any] = {}
    for label, measure, key, kind in ROWS:
        row: dict[str, Any] = {"kind": kind, "cells": {}}
        for size in sizes:
            ours = _median(runs, size, measure, "taco_gdal", key)
            ref = _median(runs, size, measure, "tacoreader", key)
            if ours is None:
                continue
            cell: dict[str, Any] = {"taco_gdal": ours, "tacoreader": ref}
            if ref is not None:
                cell["ratio"] = _ratio(ours, ref, kind)
                cell["worst_paired"] = _paired_worst(runs, size, measure, key, kind)
            if kind == "memory":
                cell["x_parquet"] = ours * 2**20 / runs[size]["parquet_bytes"]
            row["cells"][size] = cell
        for reader in READERS:
            points = [
                (int(s), c[reader]) for s, c in row["cells"].items() if c.get(reader) is not None
            ]
            row[f"slope_{reader}"] = _slope(points)
        ratios = [c["ratio"] for c in row["cells"].values() if "ratio" in c]
        row["worst_ratio"] = min(ratios) if ratios else None
        row["best_ratio"] = max(ratios) if ratios else None
        rows[label] = row
    return rows


def targets(runs: dict[str, Any], rows: dict[str, Any], big: int) -> dict[str, Any]:
    """The issue's targets at 1M (and 10M), met or not, with the figure."""

    def cell(label: str, size: int) -> dict[str, Any]:
        found: dict[str, Any] = rows[label]["cells"].get(str(size), {})
        return found

    million = 1_000_000
    out: dict[str, Any] = {}
    for label, name, want in (
        ("cold: import + load + .data", "cold >= 2x reference at 1M", 2.0),
        ("first .data after load", ".data (first, after load) >= 1.5x reference at 1M", 1.5),
        ("navigation: read() of a FOLDER", "navigation >= 2x reference at 1M", 2.0),
        ("peak RSS above imports (load + .data)", "RSS <= reference at 1M", 1.0),
    ):
        ratio = cell(label, million).get("ratio")
        out[name] = None if ratio is None else {"ratio": ratio, "met": ratio >= want}
    memory = cell("peak RSS above imports (load + .data)", million).get("x_parquet")
    out["RSS <= 3x parquet bytes at 1M"] = (
        None if memory is None else {"x_parquet": memory, "met": memory <= 3.0}
    )
    if big:
        seconds = cell("bbox + datetime filter, warm", big).get("taco_gdal")
        out[f"filter < 1 s warm at {big:,}"] = (
            None if seconds is None else {"seconds": seconds, "met": seconds < 1.0}
        )
    return out


def _fmt(value: float | None, kind: str) -> str:
    if value is None:
        return "-"
    if kind == "memory":
        return f"{value:.0f} MiB"
    return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"


def markdown(
    runs: dict[str, Any], rows: dict[str, Any], goals: dict[str, Any], meta: dict[str, Any]
) -> str:
    """The table, the parquet sizes and the targets, as markdown."""
    sizes = list(runs)
    head = (
        "| measure | "
        + " | ".join(f"{int(s):,}" for s in sizes)
        + " | slope/10x ours (ref) | worst / best |"
    )
    lines = [
        f"# Reader scaling: taco_gdal vs tacoreader {meta['machine']['tacoreader']}",
        "",
        f"`{meta['command']}` on {meta['date']}, {meta['rounds']} interleaved rounds, "
        f"load average at start {meta['machine']['load_average']}.  Cells: "
        "**ratio** (reference / taco_gdal for times; reference / taco_gdal for memory, "
        "so above 1 always favours taco_gdal), then taco_gdal | reference medians, "
        "then the worst paired round ratio.",
        "",
        head,
        "|---" * (len(sizes) + 3) + "|",
    ]
    for label, row in rows.items():
        kind = row["kind"]
        cells = []
        for size in sizes:
            c = row["cells"].get(size)
            if c is None:
                cells.append("-")
                continue
            text = _fmt(c["taco_gdal"], kind)
            if "ratio" in c:
                text = (
                    f"**{c['ratio']:.2f}x** ({text} \\| {_fmt(c['tacoreader'], kind)}; "
                    f"worst {c['worst_paired']:.2f}x)"
                )
            if kind == "memory":
                text += f", {c['x_parquet']:.1f}x parquet"
            cells.append(text)
        ours, ref = row["slope_taco_gdal"], row["slope_tacoreader"]
        slope = "-" if ours is None else f"{ours:.2f}" + ("" if ref is None else f" ({ref:.2f})")
        span = (
            "-"
            if row["worst_ratio"] is None
            else f"{row['worst_ratio']:.2f}x / {row['best_ratio']:.2f}x"
        )
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {slope} | {span} |")
    sizes_text = ", ".join(f"{int(s):,}: {runs[s]['parquet_bytes'] / 1e6:.1f} MB" for s in sizes)
    lines += ["", f"Parquet bytes per size: {sizes_text}", ""]
    lines.append("Targets:")
    lines += [f"- {name}: {value}" for name, value in goals.items()]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes",
        type=lambda s: [int(v) for v in s.split(",")],
        default=[10_000, 100_000, 1_000_000],
    )
    parser.add_argument("--big", type=int, default=10_000_000, help="taco_gdal alone; 0: skip")
    parser.add_argument("--big-ops", default="load,filter")
    parser.add_argument("--big-extra", default="", help="more measures at --big, e.g. rss,cold")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--nav-calls", type=int, default=30)
    parser.add_argument(
        "--measures", default="cold,warm,nav,rss,rss_warm", help="a subset to re-run"
    )
    parser.add_argument("--tree", type=Path, default=ROOT)
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    prepare_tacoreader()
    meta = {
        "command": "python -m bench.scale " + " ".join(sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "rounds": args.rounds,
        "repeat": args.repeat,
        "tree": str(args.tree),
        "machine": machine(),
    }
    runs = _collect(args)
    rows = summarise(runs)
    goals = targets(runs, rows, args.big)
    name = "scale" + (f"-{args.label}" if args.label else "")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(
        json.dumps({**meta, "runs": runs, "rows": rows, "targets": goals}, indent=2) + "\n"
    )
    text = markdown(runs, rows, goals, meta)
    (RESULTS / f"{name}.md").write_text(text)
    print(text)
    print(f"wrote {RESULTS / name}.json and .md")


if __name__ == "__main__":
    main()
