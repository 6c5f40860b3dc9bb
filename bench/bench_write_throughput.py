"""Benchmark: large samples into a TACO ZIP vs ``cp`` + ``sync``; what a digest adds to ``create``.

For each size set (default ``8x256,20x100,2x1024,10000x16k``: files x MiB, or
x KiB with a ``k`` suffix, of non-zero, incompressible bytes) two measurements
run on the same source files, which stay in the page cache throughout:

**Throughput** (``--rounds``, skipped with ``--no-cp``): each round copies the
files with ``cp`` into a fresh folder of the same disk and ``sync``s the
copies *and* the folder (the writer fsyncs its file and the folder entry of
its atomic link, so both sides end with the same bytes durable), then writes
them as one TACO ZIP with ``taco_gdal.write.create`` in a fresh subprocess
that times the ``create()`` call (imports not timed) and reports its peak
resident memory (``VmHWM``); ``cp`` runs first in even rounds and the writer
first in odd ones (the later run of a pair tends to be the slower one).  The
ratio ``cp seconds / writer seconds`` of each round is reported (median, best,
worst) with the load average.
Targets (issue 14): median ratio >= 0.9, peak RSS < 300 MB.

**Digest overhead** (``--checksum none,crc32c,xxh3,sha256``, ``--blocks``,
target <= 5% wall time on 20 x 100 MiB and on 10k small samples, issue 11).
A randomised complete block design:

* A *block* runs every variant once, in an order drawn at random for that
  block (``--seed``; not alternated, so no position is tied to a variant):
  the plain writer (the reference), ``none`` (the plain writer again: the A/A
  control), ``create(checksum=ALGO)`` for each ALGO, and with ``--baseline
  DIR`` another checkout's writer (``--baseline-digests xxh3``: its XXH3
  runs).  Each run is a fresh process; imports are not timed, the first
  digest's set-up (library loading) is.
* Before every run, untimed: the previous run's output is deleted, then
  ``os.sync()`` and a wait until the output's block device has had no request
  in flight and no I/O for 0.3 s (at most 3 s: other users' I/O may never
  stop), then ``--pause`` seconds (``--pause -1``: none of this, to compare).
  The root file system is mounted with ``discard``: deleting a 2 GB output
  queues discards and a journal commit, and on this machine the device was
  still busy more than 0.1 s after the sync before 20-26% of the runs of a
  20 x 100 MiB set.
* A variant's figure is its paired differences with the plain run of the
  same block: ``median(variant - plain) / median(plain)`` over the blocks,
  with a 95% bootstrap interval (blocks resampled with replacement 10,000
  times, the ratio recomputed each time), the worst pair and the number of
  blocks in which the variant was the slower.  The same is given for CPU
  seconds (user + system, every thread of the writer's process) and for the
  extra *user* CPU over the plain wall time.  A digest makes no system call
  and no I/O: it reads buffers the copy holds, so its wall cost is at most
  the user CPU it adds to the copy's thread (all of it when the copy is
  CPU-bound, as on tmpfs; less when the writer waits for the disk), and the
  user CPU, unlike the wall time, does not move with the disk's or the other
  processes' state.  With ``--baseline-digests`` each digest is also paired
  with the baseline's run of the same digest in the same block.
* The method counts only if the A/A interval contains 0.  A target is shown
  when the interval's upper end is <= 5%, refuted when its lower end is above
  5%; otherwise the noise hides it, and only more blocks (the width shrinks
  as one over the square root of their number) or a quieter machine decide.
* Also reported, to find where the noise comes from: the order effect (the
  later minus the earlier of each block's two plain runs, with its interval,
  and the median plain wall by position in the block), each run's run-queue
  wait (``/proc/self/schedstat``: time runnable but not running, i.e. CPU
  taken by other processes), the settling time before it, major page faults,
  and wall minus CPU (time waiting, mostly for the disk).

``--prefault`` (digest blocks only): each run's process first touches, then frees,
as much anonymous memory as the output will take (plus 10% and 64 MiB), untimed, and
resets its peak RSS.  On this Firecracker VM, memory the guest frees is reported
back to the host (free page reporting, 2 MiB blocks), and the next use of each page
faults on the host: a plain 256 KiB read/write copy of 2 GB from tmpfs to tmpfs took
1.9-8.7 s of system time, and 1.1-1.5 s when the same amount of memory had just
been touched and freed.  The writer's own work is unchanged; the host's page
faults, which had made the 20 x 100 MiB wall figures void (A/A intervals of
+-20-40%), are taken out of the timed run, for every variant alike.

To rerun on other data: pick the sets, run disk (``--workdir`` on the disk,
fsynced) and tmpfs (``--workdir /dev/shm``, ``df -h`` first: sources and one
output must fit) with ``--no-cp``, at least 30 blocks per set; a command that
would hold the benchmark lock longer than 15 minutes is split into several
with different ``--seed`` and ``--output``, and ``--merge A.json B.json``
recomputes the figures over all their blocks (differences are within blocks,
so blocks of different commands combine; a variant is summarised over the
blocks that ran it).

``--hash-tools`` adds two variants that write nothing: ``sha256sum`` and hashlib's SHA-256
(1 MiB reads) over the same source files, so a digest's cost in ``create()`` can be set
beside the cost of the digest alone.

``--tree DIR`` times the writer of a frozen copy (``git archive <commit> taco_gdal plugins |
tar -x -C DIR``, plus a ``COMMIT`` file naming the commit, which the
results record) instead of this working tree, which others may be editing while it runs; compare
two frozen copies that differ only by the change measured.
``--baseline DIR`` (a copy made the same way) adds
another checkout's plain writer as a variant, so a change is compared with
what it replaces on the same data under the same load.

Run: ``.venv/bin/python bench/bench_write_throughput.py [--sets 20x100,10000x16k]
[--rounds 5] [--checksum none,crc32c,xxh3,sha256] [--blocks 30] [--seed 1] [--pause 0.2]
[--tree DIR] [--baseline DIR [--baseline-digests xxh3]] [--hash-tools] [--workdir DIR]
[--no-cp] [--prefault]
[--output FILE]``, or ``--merge A.json B.json [--output FILE]``; prints a table and writes
``bench/results/write_throughput.json``.  Session 2026-11-23 (fourth), e.g.: ``--sets 20x100
--no-cp --checksum none,crc32c,xxh3,sha256 --tree T --baseline B --baseline-digests xxh3
--blocks 30 --seed 24 --workdir /dev/shm`` (``bench/results/digest_s5_*_frozen.json``).
Data lives in a temporary folder (``--workdir`` to choose the disk), deleted at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

try:
    from bench._common import write_json
except ImportError:  # run as a script: python bench/bench_write_throughput.py
    from _common import write_json  # type: ignore[no-redef]

RESULTS = Path(__file__).resolve().parent / "results" / "write_throughput.json"
REPO = Path(__file__).resolve().parents[1]
MIB = 1024 * 1024
KIB = 1024
PLAIN = "plain"
"""The reference variant of a block: ``create()`` without a digest."""
BOOTSTRAP = 10_000

_CHILD = r"""
import json, os, resource, sys, time
from pathlib import Path
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.write import create

sources = sorted(Path(sys.argv[1]).iterdir())
checksum = sys.argv[3] or None
prefault = int(sys.argv[4])
if prefault:  # untimed: make the VM host back the pages the output is about to take
    import mmap
    pages = mmap.mmap(-1, prefault)
    for offset in range(0, prefault, mmap.PAGESIZE):
        pages[offset] = 1
    pages.close()
    with open("/proc/self/clear_refs", "w") as f:  # VmHWM: the writer's peak, not this one
        f.write("5")
taco = Taco(
    Tortilla([Sample(p.stem, p) for p in sources]),
    id="throughput", dataset_version="1", description="throughput benchmark",
    licenses=["CC0-1.0"], providers=[{"name": "bench"}], tasks=["other"],
)

def sched():
    run, wait, _ = open("/proc/self/schedstat").read().split()
    status = dict(line.split(":", 1) for line in open("/proc/self/status"))
    stat = open("/proc/self/stat").read().rsplit(")", 1)[1].split()
    return int(wait), int(status["nonvoluntary_ctxt_switches"]), int(stat[9])

wait, switches, faults = sched()
def rusage():
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + children.ru_utime, own.ru_stime + children.ru_stime

def sha256_by_hashlib():
    import hashlib
    for p in sources:
        h = hashlib.sha256()
        with open(p, "rb", buffering=0) as f:
            while block := f.read(1 << 20):
                h.update(block)

user, system = rusage()
started = time.perf_counter()
if checksum == "tool:sha256sum":  # the same bytes through coreutils
    import subprocess
    subprocess.run(["sha256sum", *map(str, sources)], check=True, stdout=subprocess.DEVNULL)
elif checksum == "tool:hashlib":  # the same bytes through hashlib, 1 MiB reads
    sha256_by_hashlib()
else:
    create(taco, sys.argv[2], split_size=None, quiet=True, checksum=checksum)
seconds = time.perf_counter() - started
user_after, system_after = rusage()
cpu = user_after - user + system_after - system
wait_after, switches_after, faults_after = sched()
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
print(json.dumps({
    "seconds": seconds, "cpu_seconds": cpu,
    "user_seconds": user_after - user,
    "sys_seconds": system_after - system,
    "runqueue_wait_seconds": (wait_after - wait) / 1e9,
    "involuntary_switches": switches_after - switches,
    "major_faults": faults_after - faults,
    "peak_rss_bytes": int(status["VmHWM"].split()[0]) * 1024,
}))
"""


def parse_set(text: str) -> tuple[int, int]:
    """``"20x100"`` -> (20, 100 MiB in bytes); ``"10000x16k"`` -> (10000, 16 KiB)."""
    files, size = text.split("x")
    if size.endswith("k"):
        return int(files), int(size[:-1]) * KIB
    return int(files), int(size) * MIB


def set_label(files: int, size: int) -> str:
    return f"{files} x {size // MIB} MiB" if size % MIB == 0 else f"{files} x {size // KIB} KiB"


def make_sources(folder: Path, files: int, size: int) -> int:
    """``files`` files of ``size`` bytes of pseudo-random bytes (distinct first 8 bytes)."""
    folder.mkdir(parents=True)
    block = np.random.default_rng(0).integers(1, 255, size=size, dtype=np.uint8).tobytes()
    for i in range(files):
        with open(folder / f"sample{i:05d}.bin", "wb") as f:
            f.write(i.to_bytes(8, "little") + block[8:])
    return files * size


def _device_stat(folder: Path) -> Path | None:
    """``/sys/dev/block/M:m/stat`` of the block device holding ``folder`` (None on tmpfs)."""
    dev = os.stat(folder).st_dev
    stat = Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}/stat")
    return stat if stat.exists() else None


def settle(device: Path | None, pause: float, quiet: float = 0.3, limit: float = 3.0) -> float:
    """Untimed, before a run: sync, wait until ``device`` is idle for ``quiet`` s, pause.

    Idle is no request in flight and the I/O-ticks counter unchanged (field 10
    of the block device's ``stat``).  Returns the seconds spent.
    """
    started = time.perf_counter()
    if pause < 0:  # no settling at all: the earlier method, to compare with
        return 0.0
    os.sync()
    if device is not None:
        last, since = "", time.perf_counter()
        while time.perf_counter() - started < limit:
            fields = device.read_text().split()
            state = fields[9]
            now = time.perf_counter()
            if fields[8] != "0" or state != last:
                last, since = state, now
            elif now - since >= quiet:
                break
            time.sleep(0.05)
    time.sleep(pause)
    return time.perf_counter() - started


def time_cp(sources: Path, target: Path) -> float:
    """Seconds for ``cp`` of every source into ``target`` plus ``sync`` of copies and folder."""
    files = sorted(str(p) for p in sources.iterdir())
    target.mkdir()
    started = time.perf_counter()
    subprocess.run(["cp", *files, str(target)], check=True)
    copies = [str(target / Path(f).name) for f in files]
    subprocess.run(["sync", *copies, str(target)], check=True)
    seconds = time.perf_counter() - started
    shutil.rmtree(target)
    return seconds


def time_writer(
    sources: Path, target: Path, checksum: str | None, repo: Path = REPO, prefault: int = 0
) -> dict[str, Any]:
    """The writer's ``create()`` time, CPU and peak RSS, measured in a fresh process
    (which first touches and frees ``prefault`` bytes of memory, untimed, see ``--prefault``)."""
    result = subprocess.run(
        [sys.executable, "-c", _CHILD, str(sources), str(target), checksum or "", str(prefault)],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    )
    figures: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    target.unlink(missing_ok=True)  # the hashing tools write nothing
    return figures


def _summary(ratios: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(ratios), 3),
        "best": round(max(ratios), 3),
        "worst": round(min(ratios), 3),
    }


Variant = tuple[str, str | None, Path]
"""A block's variant: label, ``checksum=`` value, checkout that runs it."""


def tree_identity(tree: Path) -> dict[str, Any]:
    """Which code a timed checkout holds: its path and, for a git checkout, its commit and
    whether its ``taco_gdal`` differs from that commit; for a frozen ``git archive`` copy,
    the commit its ``COMMIT`` file names (``git rev-parse HEAD > T/COMMIT``).

    Example:
        >>> tree_identity(REPO)["path"] == str(REPO)
        True
    """
    identity: dict[str, Any] = {"path": str(tree)}
    head = subprocess.run(
        ["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True
    )
    if head.returncode == 0 and (tree / ".git").exists():
        changed = subprocess.run(
            ["git", "-C", str(tree), "status", "--porcelain", "--", "taco_gdal"],
            capture_output=True,
            text=True,
        )
        identity["commit"] = head.stdout.strip()
        identity["taco_gdal_changed"] = bool(changed.stdout.strip())
    elif (tree / "COMMIT").is_file():
        identity["commit"] = (tree / "COMMIT").read_text().strip()
    return identity


def _variants(
    checksums: list[str],
    baseline: Path | None,
    on_baseline: list[str],
    tree: Path = REPO,
    hash_tools: bool = False,
) -> list[Variant]:
    """A block's variants; ``on_baseline`` lists the checksums run by the baseline checkout
    (``none``: its plain writer; empty: only its plain writer); ``hash_tools`` adds
    ``sha256sum`` and hashlib's SHA-256 over the same source bytes (no write).

    Example:
        >>> [label for label, _, _ in _variants(["sha256"], None, [], hash_tools=True)]
        ['plain', 'sha256', 'sha256sum', 'hashlib:sha256']
    """
    variants: list[Variant] = [(PLAIN, None, tree)]
    variants += [(name, None if name == "none" else name, tree) for name in checksums]
    if hash_tools:
        variants += [
            ("sha256sum", "tool:sha256sum", tree),
            ("hashlib:sha256", "tool:hashlib", tree),
        ]
    if baseline is not None:
        for name in on_baseline or ["none"]:
            label = "baseline" if name == "none" else f"baseline:{name}"
            variants.append((label, None if name == "none" else name, baseline))
    return variants


def run_blocks(
    sources: Path,
    out: Path,
    variants: list[Variant],
    blocks: int,
    seed: int,
    pause: float,
    prefault: int = 0,
) -> list[dict[str, Any]]:
    """``blocks`` blocks, each running every variant once in a random order, settled before each.

    Returns one record per block: ``{"load": ..., "order": [labels], "runs": {label: figures}}``.
    """
    rng = random.Random(seed)
    device = _device_stat(out.parent)
    records = []
    for block in range(blocks):
        order = variants[:]
        rng.shuffle(order)
        record: dict[str, Any] = {
            "block": block,
            "seed": seed,
            "load": round(os.getloadavg()[0], 2),
            "order": [label for label, _, _ in order],
            "runs": {},
        }
        for label, checksum, repo in order:
            settled = settle(device, pause)
            figures = time_writer(sources, out, checksum, repo, prefault)
            figures["settle_seconds"] = round(settled, 3)
            record["runs"][label] = figures
        records.append(record)
        plain = record["runs"][PLAIN]["seconds"]
        print(
            f"  block {block}: load {record['load']:.2f} plain {plain:.3f} s "
            + " ".join(
                f"{label} {record['runs'][label]['seconds'] - plain:+.3f}"
                for label in record["order"]
                if label != PLAIN
            ),
            flush=True,
        )
    return records


def _bootstrap_ratio(
    diffs: np.ndarray, base: np.ndarray, rng: np.random.Generator
) -> tuple[float, float]:
    """95% percentile interval of ``median(diffs) / median(base)`` over resampled blocks."""
    picks = rng.integers(0, len(diffs), size=(BOOTSTRAP, len(diffs)))
    ratios = np.median(diffs[picks], axis=1) / np.median(base[picks], axis=1)
    low, high = np.percentile(ratios, [2.5, 97.5])
    return float(low), float(high)


def _paired(
    records: list[dict[str, Any]],
    label: str,
    key: str,
    reference: str = PLAIN,
    scale_key: str | None = None,
) -> dict[str, Any]:
    """Paired overhead of ``label`` over the ``reference`` run of each block, on figure ``key``.

    Relative to the median plain run's ``scale_key`` figure (``key`` by default),
    whatever the reference.
    """
    rng = np.random.default_rng(0)
    base = np.array([r["runs"][reference][key] for r in records])
    plain = np.array([r["runs"][PLAIN][scale_key or key] for r in records])
    other = np.array([r["runs"][label][key] for r in records])
    diffs = other - base
    scale = float(np.median(plain))
    low, high = _bootstrap_ratio(diffs, plain, rng)
    return {
        "blocks": len(records),
        "median": round(float(np.median(other)), 4),
        "plain_median": round(scale, 4),
        "extra_median": round(float(np.median(diffs)), 4),
        "overhead": round(float(np.median(diffs)) / scale, 4),
        "ci95": [round(low, 4), round(high, 4)],
        "worst_pair": round(float(diffs.max()) / scale, 4),
        "best_pair": round(float(diffs.min()) / scale, 4),
        "slower_blocks": int((diffs > 0).sum()),
    }


def _order_effect(records: list[dict[str, Any]]) -> dict[str, Any]:
    """How much slower the later of a block's two plain runs (plain, ``none``) is."""
    rng = np.random.default_rng(1)
    rows = [r for r in records if "none" in r["runs"]]
    if not rows:
        return {}
    later, earlier = [], []
    for r in rows:
        first = "none" if r["order"].index("none") < r["order"].index(PLAIN) else PLAIN
        second = PLAIN if first == "none" else "none"
        earlier.append(r["runs"][first]["seconds"])
        later.append(r["runs"][second]["seconds"])
    base, diffs = np.array(earlier), np.array(later) - np.array(earlier)
    low, high = _bootstrap_ratio(diffs, base, rng)
    width = len(rows[0]["order"])
    by_position = []
    for position in range(width):
        walls = [
            r["runs"][label]["seconds"]
            for r in rows
            for label in (PLAIN, "none")
            if r["order"].index(label) == position
        ]
        by_position.append(round(statistics.median(walls), 4) if walls else None)
    return {
        "later_minus_earlier": round(float(np.median(diffs)) / float(np.median(base)), 4),
        "ci95": [round(low, 4), round(high, 4)],
        "later_slower_blocks": int((diffs > 0).sum()),
        "blocks": len(rows),
        "plain_wall_by_position": by_position,
    }


def summarise_blocks(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Every variant's paired wall and CPU overhead with intervals, and the order effect."""
    labels = list(dict.fromkeys(label for r in records for label in r["runs"] if label != PLAIN))
    cpu_key = "cpu_seconds"
    variants = {}
    for label in labels:  # merged commands may have run different variants
        having = [r for r in records if label in r["runs"]]
        variants[label] = {
            "wall": _paired(having, label, "seconds"),
            "cpu": _paired(having, label, cpu_key),
            "user": _paired(having, label, "user_seconds", scale_key="seconds"),
            "user_seconds_median": round(
                statistics.median(r["runs"][label]["user_seconds"] for r in having), 3
            ),
            "sys_seconds_median": round(
                statistics.median(r["runs"][label]["sys_seconds"] for r in having), 3
            ),
            "runqueue_wait_seconds_median": round(
                statistics.median(r["runs"][label]["runqueue_wait_seconds"] for r in having), 4
            ),
        }
    for label in labels:  # this tree's digest against the baseline checkout's, same blocks
        if label.startswith("baseline:") and label.split(":", 1)[1] in variants:
            name = label.split(":", 1)[1]
            both = [r for r in records if label in r["runs"] and name in r["runs"]]
            variants[name]["vs_baseline"] = {
                "wall": _paired(both, name, "seconds", reference=label),
                "cpu": _paired(both, name, cpu_key, reference=label),
                "user": _paired(both, name, "user_seconds", reference=label, scale_key="seconds"),
            }
    plain = [r["runs"][PLAIN] for r in records]
    return {
        "blocks": len(records),
        "load_average_1min": [r["load"] for r in records],
        "plain_seconds_median": round(statistics.median(p["seconds"] for p in plain), 4),
        "plain_seconds_worst": round(max(p["seconds"] for p in plain), 4),
        "plain_cpu_seconds_median": round(statistics.median(p["cpu_seconds"] for p in plain), 4),
        "plain_user_seconds_median": round(statistics.median(p["user_seconds"] for p in plain), 3),
        "plain_sys_seconds_median": round(statistics.median(p["sys_seconds"] for p in plain), 3),
        "plain_runqueue_wait_seconds_median": round(
            statistics.median(p["runqueue_wait_seconds"] for p in plain), 4
        ),
        "plain_major_faults_max": max(p.get("major_faults", 0) for p in plain),
        "plain_wall_minus_cpu_p10_p50_p90": [
            round(float(x), 3)
            for x in np.percentile([p["seconds"] - p["cpu_seconds"] for p in plain], [10, 50, 90])
        ],
        "plain_seconds_p10_p90": [
            round(float(x), 3) for x in np.percentile([p["seconds"] for p in plain], [10, 90])
        ],
        "plain_cpu_seconds_p10_p90": [
            round(float(x), 3) for x in np.percentile([p["cpu_seconds"] for p in plain], [10, 90])
        ],
        "settled_late_runs": sum(
            run["settle_seconds"] > 0.3 + r.get("pause", 0.2) + 0.1
            for r in records
            for run in r["runs"].values()
        ),
        "runs": sum(len(r["runs"]) for r in records),
        "settle_seconds_median": round(
            statistics.median(run["settle_seconds"] for r in records for run in r["runs"].values()),
            3,
        ),
        "order_effect": _order_effect(records),
        "variants": variants,
    }


def run_set(
    folder: Path,
    files: int,
    size: int,
    rounds: int,
    variants: list[Variant],
    blocks: int,
    seed: int,
    pause: float,
    cp: bool = True,
    prefault: bool = False,
) -> dict[str, Any]:
    """The throughput rounds (unless not ``cp``), then the digest blocks (with ``variants``)."""
    sources = folder / f"sources_{files}x{size}"
    total = make_sources(sources, files, size)
    prefault_bytes = total + total // 10 + 64 * MIB if prefault else 0
    out = folder / "out.tacozip"
    device = _device_stat(folder)
    result: dict[str, Any] = {
        "files": files,
        "file_bytes": size,
        "label": set_label(files, size),
        "total_bytes": total,
        "workdir": str(folder),
        "device": str(device) if device else "tmpfs",
        "pause_seconds": pause,
        "prefault_bytes": prefault_bytes,
    }
    if cp:
        cp_s, writer_s, loads, rss = [], [], [], []
        for index in range(rounds):
            loads.append(round(os.getloadavg()[0], 2))
            # cp first in even rounds, the writer first in odd ones: the second run of a
            # pair was the slower one more often (order effect up to +19% on 8 x 256 MiB)
            for side in ("cp", "writer") if index % 2 == 0 else ("writer", "cp"):
                settle(device, pause)
                if side == "cp":
                    cp_s.append(time_cp(sources, folder / "copy"))
                    continue
                figures = time_writer(sources, out, None)
                writer_s.append(figures["seconds"])
                rss.append(figures["peak_rss_bytes"])
        ratios = [c / w for c, w in zip(cp_s, writer_s, strict=True)]
        wall = statistics.median(writer_s)
        result.update(
            {
                "load_average_1min": loads,
                "cp_sync_seconds": [round(c, 3) for c in cp_s],
                "round_plain_seconds": [round(w, 3) for w in writer_s],
                "plain_seconds_median": round(wall, 4),
                "writer_mib_per_s_median": round(total / MIB / wall, 1),
                "peak_rss_mib": round(max(rss) / MIB, 1),
                "ratio_cp_over_writer": _summary(ratios),
                "ratio_runs": [round(r, 3) for r in ratios],
            }
        )
    if len(variants) > 1 and blocks > 0:  # --blocks 0: the cp rounds only
        records = run_blocks(sources, out, variants, blocks, seed, pause, prefault_bytes)
        result["digest_blocks"] = records
        result["digest"] = summarise_blocks(records)
    shutil.rmtree(sources)
    return result


def _interval(p: dict[str, Any]) -> str:
    low, high = p["ci95"]
    return f"{p['overhead']:+.1%} [{low:+.1%}, {high:+.1%}]"


def _print(result: dict[str, Any]) -> None:
    r = result
    print(f"{r['label']} in {r['workdir']} ({r['device']}):")
    if "ratio_cp_over_writer" in r:
        ratio = r["ratio_cp_over_writer"]
        print(
            f"    plain writer {r['plain_seconds_median']} s median, "
            f"{r['writer_mib_per_s_median']} MiB/s, peak RSS {r['peak_rss_mib']} MiB; "
            f"cp+sync / writer median {ratio['median']} (best {ratio['best']}, "
            f"worst {ratio['worst']}; target >= 0.9)"
        )
        rows = zip(
            r["load_average_1min"],
            r["cp_sync_seconds"],
            r["round_plain_seconds"],
            r["ratio_runs"],
            strict=True,
        )
        for i, (load, cp_s, writer_s, ratio_) in enumerate(rows):
            print(
                f"      round {i}: load {load:5.2f}  cp+sync {cp_s:6.3f} s  "
                f"writer {writer_s:6.3f} s  ratio {ratio_:.3f}"
            )
    if "digest" not in r:
        return
    d = r["digest"]
    loads = d["load_average_1min"]
    print(
        f"    digest blocks: {d['blocks']}, load {min(loads):.2f}-{max(loads):.2f}, "
        f"plain {d['plain_seconds_median']} s median (worst {d['plain_seconds_worst']}), "
        f"CPU {d['plain_cpu_seconds_median']} s (user {d['plain_user_seconds_median']} "
        f"+ sys {d['plain_sys_seconds_median']}), run-queue wait "
        f"{d['plain_runqueue_wait_seconds_median']} s, settle {d['settle_seconds_median']} s, "
        f"major faults <= {d['plain_major_faults_max']}; plain wall p10-p90 "
        f"{d['plain_seconds_p10_p90']}, CPU p10-p90 {d['plain_cpu_seconds_p10_p90']}, "
        f"wall - CPU p10/p50/p90 {d['plain_wall_minus_cpu_p10_p50_p90']}; device busy > 0.1 s "
        f"after the sync before {d['settled_late_runs']} of {d['runs']} runs"
    )
    order = d["order_effect"]
    if order:
        print(
            f"    order effect (later - earlier plain run): {order['later_minus_earlier']:+.1%} "
            f"[{order['ci95'][0]:+.1%}, {order['ci95'][1]:+.1%}], later slower in "
            f"{order['later_slower_blocks']} of {order['blocks']}; plain wall by position "
            f"{order['plain_wall_by_position']}"
        )
    for label, v in d["variants"].items():
        name = {"none": "A/A (plain again)", "baseline": "baseline plain"}.get(label, label)
        w, c = v["wall"], v["cpu"]
        print(
            f"    {name:18s} wall {_interval(w)} (worst pair {w['worst_pair']:+.1%}, slower in "
            f"{w['slower_blocks']} of {w['blocks']}); CPU {c['median']:.3f} s "
            f"(user {v['user_seconds_median']:.2f} + sys {v['sys_seconds_median']:.2f}) "
            f"{_interval(c)}, extra user CPU / plain wall {_interval(v['user'])}"
        )
        if "vs_baseline" in v:
            w, c = v["vs_baseline"]["wall"], v["vs_baseline"]["cpu"]
            print(
                f"    {label} minus baseline:{label}: wall {_interval(w)}, CPU {_interval(c)}, "
                f"user CPU / plain wall {_interval(v['vs_baseline']['user'])}"
            )


def merge(paths: list[Path]) -> list[dict[str, Any]]:
    """The sets of several result files, blocks of the same set and folder kind pooled."""
    pooled: dict[tuple[str, str], dict[str, Any]] = {}
    for path in paths:
        for s in json.loads(path.read_text())["sets"]:
            if "digest_blocks" not in s:
                continue
            key = (s["label"], "tmpfs" if s["device"] == "tmpfs" else "disk")
            if key in pooled:
                pooled[key]["digest_blocks"] += s["digest_blocks"]
                pooled[key]["workdir"] += f", {s['workdir']}"
            else:
                pooled[key] = {k: v for k, v in s.items() if k != "digest"}
    sets = list(pooled.values())
    for s in sets:
        s["digest"] = summarise_blocks(s["digest_blocks"])
    return sets


def main(argv: list[str] | None = None) -> int:
    """Run every size set, print the ratios and overheads, and write the JSON results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sets", default="8x256,20x100,2x1024,10000x16k", help="files x MiB (or x KiB: 16k)"
    )
    parser.add_argument("--rounds", "--repeat", type=int, default=5, help="cp vs writer rounds")
    parser.add_argument(
        "--checksum", default="", help="digest variants, comma list (none: the A/A control)"
    )
    parser.add_argument("--blocks", type=int, default=30, help="randomised digest blocks")
    parser.add_argument("--seed", type=int, default=1, help="seed of the blocks' orders")
    parser.add_argument(
        "--pause", type=float, default=0.2, help="seconds after settling (< 0: do not settle)"
    )
    parser.add_argument(
        "--tree", type=Path, default=REPO, help="checkout whose writer is timed (default: this)"
    )
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout to time")
    parser.add_argument(
        "--baseline-digests", default="", help="also the baseline's runs with these checksums"
    )
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--no-cp", action="store_true", help="skip the cp + sync rounds")
    parser.add_argument("--merge", type=Path, nargs="+", help="pool the blocks of result files")
    parser.add_argument(
        "--hash-tools",
        action="store_true",
        help="digest blocks: also time sha256sum and hashlib's SHA-256 over the sources",
    )
    parser.add_argument(
        "--prefault",
        action="store_true",
        help="digest blocks: each run first touches and frees the output's size in memory",
    )
    args = parser.parse_args(argv)
    if args.merge:
        results = merge(args.merge)
        for result in results:
            _print(result)
        merged = {"benchmark": "write_throughput", "merged": [str(p) for p in args.merge]}
        write_json(args.output, {**merged, "sets": results})
        return 0
    sets = [parse_set(item) for item in args.sets.split(",")]
    checksums = [name for name in args.checksum.split(",") if name]
    baseline_digests = [name for name in args.baseline_digests.split(",") if name]
    variants = _variants(
        checksums, args.baseline, baseline_digests, args.tree.resolve(), args.hash_tools
    )
    folder = Path(tempfile.mkdtemp(prefix="bench_write_throughput_", dir=args.workdir))
    results = []
    try:
        for files, size in sets:
            results.append(
                run_set(
                    folder,
                    files,
                    size,
                    args.rounds,
                    variants,
                    args.blocks,
                    args.seed,
                    args.pause,
                    not args.no_cp,
                    args.prefault,
                )
            )
            _print(results[-1])
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    ratios = [r["ratio_cp_over_writer"]["median"] for r in results if "ratio_cp_over_writer" in r]
    trees = {"tree": args.tree.resolve()}
    if args.baseline is not None:
        trees["baseline"] = args.baseline.resolve()
    worst = min(ratios) if ratios else None
    write_json(
        args.output,
        {
            "benchmark": "write_throughput",
            "python": sys.version.split()[0],
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "rounds": args.rounds,
            "blocks": args.blocks,
            "seed": args.seed,
            "argv": sys.argv[1:],
            "trees": {label: tree_identity(path) for label, path in trees.items()},
            "sets": results,
            "worst_median_ratio": worst,
            "target_ratio": 0.9,
            "target_peak_rss_mib": 300,
        },
    )
    if worst is not None:
        print(f"worst set median ratio: {worst} (target >= 0.9)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
