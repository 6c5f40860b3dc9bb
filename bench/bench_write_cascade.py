"""Benchmark: metadata-bound writes (tiny samples), taco_gdal vs tacotoolbox 0.26.9, by size.

Shapes (every FILE a distinct 16-byte file, one ``cloud`` double per sample):

* ``flat-1k``, ``flat-10k``, ``flat-100k``, ``flat-1m``: N FILE samples at level 0;
* ``cascade-20k``: 20,000 level-0 FOLDERs x 4 level-1 FOLDERs x 4 level-2 FILEs
  (20k / 80k / 320k rows, 100k ``__meta__`` tables), the shape issue 14 timed
  at 567 s; the number scales it (``cascade-2k`` = 2k/8k/32k);
* ``wide-20k``: the same tree with 40-character ids (hex digits after the
  number, so they compress as real ids do) and three more metadata columns
  (``sensor`` string, ``elevation`` double, ``quality`` int), 122-character
  relative paths at level 2.

Each measurement runs in a fresh subprocess: ``build`` (Sample, Tortilla and
Taco construction, each path checked) and ``create`` (``create(taco,
out.tacozip, split_size=None)``) are timed separately; peak RSS (``VmHWM``)
is reported raw and above the RSS after imports (the tool's model and writer
modules, pyarrow and pyarrow.parquet; pandas is not imported up front: pyarrow
imports it at its first ``pa.array``, so a writer that needs it pays for it
above the imports), the output's sha256 with the ZIP member times zeroed (the
only bytes two writes of the same samples may differ in), and the CPU
seconds of both phases (``time.process_time``, threads included), which a
loaded machine inflates less than wall time; of ``create`` also the system
CPU seconds, context switches and minor page faults (``getrusage``): thread
hand-offs and mapped blocks show there.
Tools alternate within each round (interleaved) on the same files;
tacotoolbox runs only on the shapes listed by ``--reference`` (default:
flat-1k, flat-10k, cascade-2k; at 100k+ it takes many minutes).  Reported per
shape: median, best and worst total seconds per tool, their ratio, and the
slope per 10x samples (log10 of the time ratio over log10 of the size ratio
between consecutive sizes of one kind; 1.0 = linear).

Run: ``.venv/bin/python bench/bench_write_cascade.py [--rounds 3] [--shapes ...]``;
prints a table and writes ``bench/results/write_cascade.json``.  The files live
in a temporary folder (``--workdir``), deleted at the end.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import math
import os
import platform
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

try:
    from bench._common import write_json
except ImportError:  # run as a script
    from _common import write_json  # type: ignore[no-redef]

RESULTS = Path(__file__).resolve().parent / "results" / "write_cascade.json"
REPO = Path(__file__).resolve().parents[1]
FAN = 4

_CHILD = r"""
import json, resource, sys, time, warnings
from pathlib import Path
warnings.simplefilter("ignore")
def rss_kib():
    status = dict(line.split(":", 1) for line in open("/proc/self/status"))
    return int(status["VmRSS"].split()[0])
tool, shape, files, out = sys.argv[1], sys.argv[2], Path(sys.argv[3]), sys.argv[4]
n = int(sys.argv[5])
columns = tool == "taco_gdal-columns"
tool = "taco_gdal" if columns else tool
FAN = 4
collection = dict(id="cascade", dataset_version="1", description="metadata benchmark",
                  licenses=["CC0-1.0"], providers=[{"name": "bench"}], tasks=["other"])
if tool == "taco_gdal":
    from taco_gdal.model import Sample, Taco, Tortilla
    from taco_gdal.write import create
    def S(i, p, **kw): return Sample(i, p, **kw)
    def T(samples): return Tortilla(samples)
    def C(t): return Taco(t, **collection)
    def W(taco): create(taco, out, split_size=None, quiet=True)
else:
    from tacotoolbox import create
    from tacotoolbox.datamodel import Sample, Taco, Tortilla
    def S(i, p, **kw): return Sample(id=i, path=p, **kw)
    def T(samples): return Tortilla(samples=samples)
    def C(t): return Taco(tortilla=t, **collection)
    def W(taco): create(taco, out, split_size=None)
import pyarrow, pyarrow.parquet  # what every tool imports to write
after_imports = rss_kib() * 1024
started, cpu_started = time.perf_counter(), time.process_time()
if columns:  # the same samples as Arrow columns, made without a Python object per row
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    def arrow(values):  # from the buffer: pa.array() and pa.scalar() would import pandas
        dtype = {"int64": pa.int64(), "float64": pa.float64()}[values.dtype.name]
        return pa.Array.from_buffers(dtype, len(values), [None, pa.py_buffer(values)])
    numbers = pc.cast(arrow(np.arange(n, dtype=np.int64)), pa.string())
    ids = pc.utf8_lpad(numbers, 7, "0")
    ids = pc.utf8_replace_slice(ids, 0, 0, "s")
    paths = pc.utf8_replace_slice(numbers, 0, 0, f"{files}/f")
    cloud = arrow(np.arange(n, dtype=np.int64) % 100 * 1.0)
    del numbers
    roots = Tortilla.from_columns(ids, paths, pa.table({"cloud": cloud}))
    del ids, paths, cloud
    taco = C(roots)
elif shape == "flat":
    roots = [S(f"s{i:07d}", files / f"f{i}", cloud=float(i % 100)) for i in range(n)]
else:  # the cascade; "wide": 40-character ids and 3 more metadata columns
    if shape == "wide":
        def node_id(prefix, i):
            return f"{prefix}{i:07d}-{(i * 2654435761) % 2**128:032x}"[:40]
        def extra(i):
            return {"sensor": ("S2A", "S2B", "L8", "L9")[i % 4],
                    "elevation": float(i % 997) * 0.5, "quality": i % 7}
    else:
        def node_id(prefix, i):
            return f"t{i:07d}" if prefix == "t" else f"{prefix}{i}"
        def extra(i):
            return {}
    mid_ids = [node_id("s", j) for j in range(FAN)]
    leaf_ids = [node_id("b", m) for m in range(FAN)]
    roots, k = [], 0
    for i in range(n):
        mids = []
        for j in range(FAN):
            leaves = []
            for m in range(FAN):
                leaves.append(S(leaf_ids[m], files / f"f{k}", cloud=float(m), **extra(k)))
                k += 1
            mids.append(S(mid_ids[j], T(leaves), cloud=float(j), **extra(i * FAN + j)))
        roots.append(S(node_id("t", i), T(mids), cloud=float(i % 100), **extra(i)))
if not columns:
    taco = C(T(roots))
built, cpu_built = time.perf_counter(), time.process_time()
usage_built = resource.getrusage(resource.RUSAGE_SELF)
W(taco)
done, cpu_done = time.perf_counter(), time.process_time()
usage = resource.getrusage(resource.RUSAGE_SELF)
# VmHWM, not ru_maxrss: Linux keeps ru_maxrss across exec, so a child's figure
# was at least the parent's RSS when it forked (463 MiB after listing 1M files)
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
peak = int(status["VmHWM"].split()[0]) * 1024
print(json.dumps({"build": built - started, "create": done - built,
                  "cpu_build": cpu_built - cpu_started, "cpu_create": cpu_done - cpu_built,
                  "sys_create": usage.ru_stime - usage_built.ru_stime,
                  "switches_create": usage.ru_nvcsw + usage.ru_nivcsw
                  - usage_built.ru_nvcsw - usage_built.ru_nivcsw,
                  "faults_create": usage.ru_minflt - usage_built.ru_minflt,
                  "peak_rss_bytes": peak, "rss_after_imports_bytes": after_imports}))
"""


def make_files(folder: Path, count: int) -> None:
    """``count`` distinct 16-byte files ``f0``, ``f1``, ... (kept across shapes)."""
    folder.mkdir(parents=True, exist_ok=True)
    have = len(os.listdir(folder))
    for i in range(have, count):
        with open(folder / f"f{i}", "wb") as f:
            f.write(i.to_bytes(16, "little"))


def _shape(name: str) -> tuple[str, int, int]:
    """``(kind, n, files)`` of ``flat-10k`` / ``cascade-20k``."""
    kind, size = name.split("-")
    n = int(size.replace("k", "000").replace("m", "000000"))
    return kind, n, n if kind == "flat" else n * FAN * FAN


BASELINE = "taco_gdal@baseline"
"""taco_gdal imported from ``--baseline`` (a checkout of an earlier commit); with several
``--baseline`` trees each is ``taco_gdal@<folder name>``."""


def baseline_tools(trees: list[Path]) -> dict[str, Path]:
    """The tool name of each ``--baseline`` tree (one: :data:`BASELINE`)."""
    if len(trees) == 1:
        return {BASELINE: trees[0]}
    names = {f"taco_gdal@{tree.name}": tree for tree in trees}
    if len(names) != len(trees):
        raise SystemExit(f"--baseline folders need distinct names: {[str(t) for t in trees]}")
    return names


COLUMNS = "taco_gdal-columns"
"""taco_gdal with the flat samples given to ``Tortilla.from_columns`` (``--columns``)."""


def zip_digest(path: Path) -> str:
    """sha256 of a ZIP with each member's DOS time and date zeroed (local and central).

    The writer stamps the time of writing into every member; everything else
    must be equal between two writes of the same samples.
    """
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
    for info in infos:
        data[info.header_offset + 10 : info.header_offset + 14] = bytes(4)
    position = data.find(b"PK\x01\x02")
    for _ in infos:
        data[position + 12 : position + 16] = bytes(4)
        name, extra, comment = struct.unpack_from("<HHH", data, position + 28)
        position += 46 + name + extra + comment
    return hashlib.sha256(data).hexdigest()


def run_one(
    tool: str, shape: str, files: Path, out: Path, baseline: Path | None = None
) -> dict[str, Any]:
    """One measurement of ``tool``; a baseline tool (``taco_gdal@...``) runs in ``baseline``."""
    kind, n, _ = _shape(shape)
    checkout = baseline if tool.startswith("taco_gdal@") and baseline is not None else REPO
    name = "taco_gdal" if tool.startswith("taco_gdal@") else tool
    result = subprocess.run(
        [sys.executable, "-c", _CHILD, name, kind, str(files), str(out), str(n)],
        cwd=checkout,  # the child imports taco_gdal from its working directory
        check=True,
        capture_output=True,
        text=True,
    )
    figures: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    figures["total"] = figures["build"] + figures["create"]
    figures["cpu_total"] = figures["cpu_build"] + figures["cpu_create"]
    figures["sha256"] = zip_digest(out)
    out.unlink()
    return figures


def _above(run: dict[str, Any]) -> int:
    """Peak RSS minus the RSS after imports (taco_gdal or tacotoolbox, pyarrow, pandas)."""
    return int(run["peak_rss_bytes"] - run["rss_after_imports_bytes"])


def _stats(runs: list[dict[str, Any]]) -> dict[str, Any]:
    totals = [r["total"] for r in runs]
    return {
        "total_median": round(statistics.median(totals), 3),
        "total_best": round(min(totals), 3),
        "total_worst": round(max(totals), 3),
        "build_median": round(statistics.median(r["build"] for r in runs), 3),
        "create_median": round(statistics.median(r["create"] for r in runs), 3),
        "cpu_total_median": round(statistics.median(r["cpu_total"] for r in runs), 3),
        "cpu_create_median": round(statistics.median(r["cpu_create"] for r in runs), 3),
        "sys_create_median": round(statistics.median(r["sys_create"] for r in runs), 3),
        "switches_create_median": int(statistics.median(r["switches_create"] for r in runs)),
        "peak_rss_mib_median": round(
            statistics.median(r["peak_rss_bytes"] for r in runs) / 2**20, 1
        ),
        "peak_rss_mib": round(max(r["peak_rss_bytes"] for r in runs) / 2**20, 1),
        "peak_above_imports_mib_median": round(
            statistics.median(_above(r) for r in runs) / 2**20, 1
        ),
        "peak_above_imports_mib": round(max(_above(r) for r in runs) / 2**20, 1),
        "sha256": sorted({r["sha256"] for r in runs}),
        "runs": [
            {k: round(v, 3) for k, v in r.items() if not k.endswith("_bytes") and k != "sha256"}
            | {
                "peak_rss_mib": round(r["peak_rss_bytes"] / 2**20, 1),
                "peak_above_imports_mib": round(_above(r) / 2**20, 1),
            }
            for r in runs
        ],
    }


def _describe(shape: str, tool: str, stats: dict[str, Any]) -> str:
    """One line: time (median, worst), CPU, peak RSS raw and above imports (median, worst)."""
    return (
        f"{shape:12s} {tool} {stats['total_median']:8.2f} s (build {stats['build_median']:.2f}"
        f", create {stats['create_median']:.2f}, worst {stats['total_worst']:.2f}"
        f", cpu {stats['cpu_total_median']:.2f} (create {stats['cpu_create_median']:.2f}"
        f", sys {stats['sys_create_median']:.2f}, {stats['switches_create_median']} switches)"
        f", peak RSS {stats['peak_rss_mib_median']:.0f} MiB"
        f" (worst {stats['peak_rss_mib']:.0f}), above imports"
        f" {stats['peak_above_imports_mib_median']:.0f}"
        f" (worst {stats['peak_above_imports_mib']:.0f}) MiB)"
    )


def _slopes(results: dict[str, Any], tool: str) -> dict[str, float]:
    """log10(time ratio) / log10(sample ratio) between consecutive sizes of each kind."""
    out: dict[str, float] = {}
    for kind in ("flat", "cascade", "wide"):
        sizes = sorted(
            (_shape(s)[1], r[tool]["total_median"])
            for s, r in results.items()
            if s.split("-")[0] == kind and tool in r
        )
        for (a, ta), (b, tb) in itertools.pairwise(sizes):
            if ta > 0:
                slope = math.log10(tb / ta) / math.log10(b / a)
                out[f"{kind} {a // 1000}k->{b // 1000}k"] = round(slope, 2)
    return out


def main(argv: list[str] | None = None) -> int:
    """Create the files, run every shape interleaved, print and write the results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="flat-1k,flat-10k,flat-100k,cascade-2k,cascade-20k")
    parser.add_argument("--reference", default="flat-1k,flat-10k,cascade-2k")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument(
        "--baseline",
        type=Path,
        action="append",
        default=[],
        help="a checkout of an earlier commit (git worktree add): measured in the same rounds;"
        " repeat for several",
    )
    parser.add_argument(
        "--files",
        type=Path,
        default=None,
        help="folder of the 16-byte source files, kept (made if missing): a million take minutes",
    )
    parser.add_argument(
        "--columns",
        action="store_true",
        help="flat shapes also with Tortilla.from_columns (this checkout only)",
    )
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    shapes = args.shapes.split(",")
    baselines = baseline_tools(args.baseline) if args.baseline else {}
    reference = set(args.reference.split(","))
    folder = Path(tempfile.mkdtemp(prefix="bench_write_cascade_", dir=args.workdir))
    results: dict[str, Any] = {}
    print(f"load average at start: {os.getloadavg()}", flush=True)
    try:
        files = args.files or folder / "files"
        make_files(files, max(_shape(s)[2] for s in shapes))
        for shape in shapes:
            tools = ["taco_gdal", *baselines]
            tools += [COLUMNS] if args.columns and shape.startswith("flat") else []
            tools += ["tacotoolbox"] if shape in reference else []
            runs: dict[str, list[dict[str, Any]]] = {t: [] for t in tools}
            loads = []
            for round_ in range(args.rounds):
                loads.append(round(os.getloadavg()[0], 2))
                # the first tool of a round is rotated, so that whatever going first
                # costs (caches the previous run left) falls on each tree in turn
                shift = round_ % len(tools)
                for tool in tools[shift:] + tools[:shift]:
                    out = folder / "out.tacozip"
                    runs[tool].append(run_one(tool, shape, files, out, baselines.get(tool)))
            results[shape] = {t: _stats(r) for t, r in runs.items()}
            results[shape]["load_average_1min"] = loads
            ours = [t for t in tools if t != "tacotoolbox"]
            line = "\n".join(_describe(shape, t, results[shape][t]) for t in ours)
            digests = {r["sha256"] for t in ours for r in runs[t]}
            results[shape]["outputs_identical"] = len(digests) == 1
            line += f"\n{shape:12s} outputs identical (ZIP times zeroed): {len(digests) == 1}"
            if "tacotoolbox" in results[shape]:
                ref = results[shape]["tacotoolbox"]["total_median"]
                ratio = ref / results[shape]["taco_gdal"]["total_median"]
                results[shape]["speedup"] = round(ratio, 2)
                worst = results[shape]["tacotoolbox"]["total_worst"]
                line += f"  tacotoolbox {ref:8.2f} s (worst {worst:.2f})  speed-up {ratio:.2f}x"
            print(line + f"  load {loads}", flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    slopes = {tool: _slopes(results, tool) for tool in ("taco_gdal", "tacotoolbox")}
    print(f"slope per 10x samples (1.0 = linear): {slopes}")
    write_json(
        args.output,
        {
            "benchmark": "write_cascade",
            "python": sys.version.split()[0],
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "rounds": args.rounds,
            "shapes": results,
            "slope_per_10x": slopes,
            "target_cascade_20k_seconds": 60,
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
