"""What work on the other CPU costs a plain TACO ZIP write: hashing in cache or from memory.

The SHA-256 of a large sample is computed by the digest thread on the other CPU
while the writer copies (DESIGN.md, ``write/``), and on a noisy host that costs
the copy more than on a quiet one.  This separates the two things the thread
does: it hashes (CPU) and it reads the sources from memory (DRAM traffic).  A
plain write, no digest, is timed in a fresh process while another process on
the other CPU

- ``idle``: does nothing (twice per block: the A/A control);
- ``cache``: runs SHA-256 over one 256 KiB buffer again and again (the bytes stay
  in its core's cache: hashing only);
- ``dram``: runs SHA-256 over the write's own sources, mapped, file after file
  (the same hashing, now reading 2 GB from memory, as the digest thread does).

Blocks of the four are interleaved in random order; each load process starts,
runs for ``--lead`` seconds, and is stopped once the write returns.  Figures are
the median of the paired differences against the block's first idle write, over
the median idle write, with a 95% bootstrap interval::

    python bench/bench_digest_interference.py --blocks 20 --output bench/results/x.json

When ``cache`` costs nothing and ``dram`` costs what a SHA-256 write costs on the
same host, the digest's overhead is the host's memory bandwidth, not its CPU.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script: its neighbour
from bench_write_throughput import (
    MIB,
    REPO,
    _paired,
    make_sources,
    time_writer,
    tree_identity,
)

LOADS = ("idle", "cache", "dram")

_LOAD = r"""
import hashlib, mmap, os, sys
mode, folder = sys.argv[1], sys.argv[2]
if mode == "cache":
    data = os.urandom(1 << 18)
    while True:
        hashlib.sha256(data).digest()
paths = sorted(os.path.join(folder, name) for name in os.listdir(folder))
while True:
    for path in paths:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ) as m:
            view = memoryview(m)
            for start in range(0, len(m), 16 << 20):
                hashlib.sha256(view[start : start + (16 << 20)]).digest()
            view.release()
"""
"""The other CPU's work: ``cache`` hashes one buffer, ``dram`` the sources from memory."""


def timed_under(
    load: str, sources: Path, target: Path, tree: Path, lead: float, prefault: int
) -> dict[str, Any]:
    """A plain write of ``sources`` while ``load`` runs in another process."""
    other = None
    if load != "idle":
        other = subprocess.Popen([sys.executable, "-c", _LOAD, load, str(sources)])
    try:
        time.sleep(lead)
        figures: dict[str, Any] = time_writer(sources, target, None, tree, prefault)
        return figures
    finally:
        if other is not None:
            other.send_signal(signal.SIGKILL)
            other.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--mib", type=int, default=100)
    parser.add_argument("--blocks", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lead", type=float, default=0.3, help="seconds the load runs first")
    parser.add_argument("--tree", type=Path, default=REPO, help="checkout whose writer is timed")
    parser.add_argument("--workdir", type=Path, default=Path("/dev/shm"))
    parser.add_argument("--output", type=Path)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    folder = Path(tempfile.mkdtemp(prefix="bench_interference_", dir=args.workdir))
    try:
        sources = folder / "sources"
        total = make_sources(sources, args.files, args.mib * MIB)
        labels = ["plain", "none", "cache", "dram"]  # plain and none: both idle
        records: list[dict[str, Any]] = []
        for block in range(args.blocks):
            order = labels[:]
            rng.shuffle(order)
            runs: dict[str, dict[str, Any]] = {}
            for label in order:
                load = "idle" if label in ("plain", "none") else label
                target = folder / f"{label}.tacozip"
                runs[label] = timed_under(
                    load, sources, target, args.tree.resolve(), args.lead, total
                )
            records.append({"block": block, "order": order, "runs": runs})
            line = " ".join(f"{k} {runs[k]['seconds']:.3f}" for k in labels)
            print(f"  block {block}: {line}", flush=True)
        summary = {label: _paired(records, label, "seconds") for label in ("none", "cache", "dram")}
        for label, figures in summary.items():
            low, high = figures["ci95"]
            name = "A/A (idle again)" if label == "none" else f"other CPU: {label}"
            print(
                f"{name:18s} wall {figures['overhead']:+.1%} [{low:+.1%}, {high:+.1%}] "
                f"(slower in {figures['slower_blocks']} of {figures['blocks']})"
            )
        if args.output is not None:
            result = {
                "argv": sys.argv,
                "tree": tree_identity(args.tree.resolve()),
                "set": f"{args.files} x {args.mib} MiB",
                "workdir": str(args.workdir),
                "summary": summary,
                "blocks": records,
            }
            args.output.write_text(json.dumps(result, indent=1) + "\n")
            print(f"wrote {args.output}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
