"""Benchmark: who digests SHA-256 of small samples, in one process (QGIS, frozen apps, one CPU).

An application that embeds Python (QGIS) or freezes it has no interpreter
to run the writer's helper process (``write/_digest_process._interpreter``
finds none).  There a native thread of ``taco_gdal._sha256_thread`` reads
the small members back from the output as it grows (``scan``,
``write/_output_digests.DigestScan``); where the output cannot be read back,
the writer hands each member to the extension's ring thread (``thread``);
where neither can run (one CPU) the writer digests them on its own thread in
lanes (``LaneDigests``, three members at once with the SHA extensions);
without the extension, one at a time with hashlib.  This benchmark writes
``--count`` files of ``--kib`` KiB (tmpfs) with ``create()`` in one process,
in randomised rounds of: plain, SHA-256 by the helper process (the default
where Python runs), by the scan thread, by the ring thread, in lanes on the
writer's thread, one at a time on the writer's thread (the extension made
unimportable), plain again (A/A).  Each variant is set up as the writer
meets it (no interpreter for a helper; the threads not wanted refused as
where they cannot start; the module not importable), on every CPU of the
machine: the lanes are meant for one CPU, where no helper could run beside
the writer, so their figure here is not the one a pinned writer sees.  It
reports each variant's median extra wall time over the plain write of the
same round, with its quartiles: a steady-state, in-process figure, not the
fresh-process one of ``bench_write_throughput.py``.

Run: ``.venv/bin/python bench/bench_digest_embedded.py [--rounds 25] [--count 10000]
[--kib 16]``; writes ``bench/results/digest_embedded.json``.  Pass ``--tree`` to time
another checkout's writer (``git archive`` plus its built extensions).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

try:
    from bench._common import write_json
except ImportError:  # run as a script: python bench/bench_digest_embedded.py
    from _common import write_json  # type: ignore[no-redef]

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "digest_embedded.json"
VARIANTS = (
    ("plain", None),
    ("process", "sha256"),
    ("scan", "sha256"),
    ("thread", "sha256"),
    ("lanes", "sha256"),
    ("inline", "sha256"),
    ("A/A", None),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--kib", type=int, default=16)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workdir", default="/dev/shm")
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--tree", type=Path, default=REPO, help="checkout whose writer is timed")
    args = parser.parse_args()
    sys.path.insert(0, str(args.tree))
    from taco_gdal.errors import TacoIOError
    from taco_gdal.model import Sample, Taco, Tortilla
    from taco_gdal.write import _digest_process, _digest_thread, create

    native = _digest_thread.NATIVE_SHA256
    interpreter, thread = _digest_process._interpreter, _digest_thread.DigestThread
    scan = getattr(_digest_thread, "DigestScan", None)  # not in trees before the 25th session

    def no_thread(*args: object, **kwargs: object) -> Any:
        raise TacoIOError("no native SHA-256 thread here (benchmark)")

    def arrange(name: str) -> None:
        """The writer's circumstances for variant ``name``."""
        _digest_process._interpreter = interpreter if name == "process" else lambda: None
        _digest_thread.DigestThread = thread if name == "thread" else no_thread  # type: ignore[misc]
        if scan is not None:
            _digest_thread.DigestScan = scan if name == "scan" else no_thread  # type: ignore[misc]
        _digest_thread.NATIVE_SHA256 = "taco_gdal._not_built" if name == "inline" else native

    with tempfile.TemporaryDirectory(dir=args.workdir, prefix="bench_digest_embedded_") as tmp:
        sources = Path(tmp, "sources")
        sources.mkdir()
        for i in range(args.count):
            (sources / f"s{i:06d}.bin").write_bytes(os.urandom(args.kib * 1024))
        taco = Taco(
            Tortilla([Sample(p.stem, p) for p in sorted(sources.iterdir())]),
            id="embedded", dataset_version="1", description="embedded digest benchmark",
            licenses=["CC0-1.0"], providers=[{"name": "bench"}], tasks=["other"],
        )  # fmt: skip

        def run(name: str, checksum: str | None) -> float:
            arrange(name)
            started = time.perf_counter()
            create(taco, Path(tmp, "out.tacozip"), quiet=True, checksum=checksum, overwrite=True)
            return time.perf_counter() - started

        for name, checksum in VARIANTS:  # warm-up, untimed
            run(name, checksum)
        seconds: dict[str, list[float]] = {name: [] for name, _ in VARIANTS}
        order = list(VARIANTS)
        rng = random.Random(args.seed)
        for _ in range(args.rounds):
            rng.shuffle(order)
            for name, checksum in order:
                seconds[name].append(run(name, checksum))
    plain = statistics.median(seconds["plain"])
    report: dict[str, Any] = {
        "count": args.count, "kib": args.kib, "rounds": args.rounds, "tree": str(args.tree),
    }  # fmt: skip
    print(f"{args.count} x {args.kib} KiB, {args.rounds} rounds, plain {plain:.3f} s median")
    for name, _ in VARIANTS[1:]:
        extra = sorted(a - b for a, b in zip(seconds[name], seconds["plain"], strict=True))
        quartiles = [extra[len(extra) // 4] / plain, extra[3 * len(extra) // 4] / plain]
        median = statistics.median(extra) / plain
        report[name] = {
            "extra_median": median, "extra_quartiles": quartiles, "seconds": seconds[name],
        }  # fmt: skip
        print(f"  {name:7s} {median:+.1%} (quartiles {quartiles[0]:+.1%}, {quartiles[1]:+.1%})")
    report["plain"] = {"seconds": seconds["plain"]}
    write_json(args.output, report)


if __name__ == "__main__":
    main()
