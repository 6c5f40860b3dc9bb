"""One measured epoch: a DataLoader over half of the samples, after a warm-up on the other half.

Workers are persistent, so the timed half sees started workers with open
connections (what every epoch after the first looks like in a training run),
and reads samples no worker has read before (GDAL's block cache cannot help),
shuffled as in training.
Requests and bytes come from the server's log of the timed half only; CPU
time from ``/proc`` of the loader's processes (main and workers) and of the
server process, over the timed half.  CPU per sample does not depend on what
else runs on the machine, samples/s does.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from osgeo import gdal
from torch.utils.data import DataLoader, Dataset, Sampler

from bench.dataloader.server import ServerProcess


class Halves(Sampler[int]):
    """The first half of the indices, or the second (``part`` 0 or 1), in a seeded random order.

    Shuffled as a training loop reads (``shuffle=True``): consecutive reads of
    one worker are not neighbours in the file, so GDAL's read-ahead of one
    sample does not bring the next one.
    """

    def __init__(self, length: int, seed: int = 0) -> None:
        self.length = length
        self.part = 0
        self.seed = seed

    def _indices(self) -> list[int]:
        half = self.length // 2
        indices = list(range(0, half) if self.part == 0 else range(half, 2 * half))
        random.Random(self.seed + self.part).shuffle(indices)
        return indices

    def __iter__(self) -> Iterator[int]:
        return iter(self._indices())

    def __len__(self) -> int:
        return self.length // 2


@dataclass(frozen=True)
class Epoch:
    loop: str
    pixels: int
    workers: int
    samples: int
    seconds: float
    requests: int
    gets: int
    bytes: int
    warmup_seconds: float
    warmup_requests: int
    sample_bytes: float
    loader_cpu_s: float = 0.0
    server_cpu_s: float = 0.0
    load_1min: float = 0.0
    """The machine's 1-minute load average when the timed half started."""

    @property
    def samples_per_s(self) -> float:
        return self.samples / self.seconds

    @property
    def requests_per_sample(self) -> float:
        return self.requests / self.samples

    @property
    def gets_per_sample(self) -> float:
        return self.gets / self.samples

    @property
    def bytes_per_sample(self) -> float:
        return self.bytes / self.samples

    @property
    def loader_cpu_ms_per_sample(self) -> float:
        return 1e3 * self.loader_cpu_s / self.samples

    @property
    def server_cpu_ms_per_sample(self) -> float:
        return 1e3 * self.server_cpu_s / self.samples


_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a live process, from ``/proc/<pid>/stat``."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def _loader_pids(loader: DataLoader[Any]) -> list[int]:
    """The main process and the loader's (persistent) worker processes."""
    iterator = getattr(loader, "_iterator", None)
    workers = getattr(iterator, "_workers", [])
    return [os.getpid(), *(w.pid for w in workers)]


def _drain(loader: DataLoader[Any]) -> int:
    count = 0
    for batch in loader:
        count += int(batch["image"].shape[0])
    return count


def measure(
    loop: str,
    dataset: Dataset[Any],
    server: ServerProcess,
    workers: int,
    batch_size: int,
    pixels: int,
    sample_bytes: float,
) -> Epoch:
    """Warm up on the first half, then time an epoch over the second half.

    GDAL's network cache is cleared first, so no loop reads blocks that the
    previous one (in this process, with 0 workers) left behind.
    """
    gdal.VSICurlClearCache()
    sampler = Halves(len(dataset))  # type: ignore[arg-type]
    loader = DataLoader(
        dataset,
        batch_size=batch_size,
        sampler=sampler,
        num_workers=workers,
        persistent_workers=workers > 0,
        multiprocessing_context=multiprocessing.get_context("fork") if workers else None,
    )
    server.clear()
    start = time.perf_counter()
    _drain(loader)
    warmup = time.perf_counter() - start
    warmup_requests = len(server.records())
    server.clear()
    sampler.part = 1
    pids = _loader_pids(loader)
    load = os.getloadavg()[0]
    cpu_before = [cpu_seconds(p) for p in pids]
    server_before = cpu_seconds(server.pid)
    start = time.perf_counter()
    count = _drain(loader)
    seconds = time.perf_counter() - start
    loader_cpu = sum(cpu_seconds(p) for p in pids) - sum(cpu_before)
    server_cpu = cpu_seconds(server.pid) - server_before
    records = server.records()
    del loader  # stops the persistent workers
    return Epoch(
        loop,
        pixels,
        workers,
        count,
        seconds,
        len(records),
        sum(r.method == "GET" for r in records),
        sum(r.bytes_sent for r in records),
        warmup,
        warmup_requests,
        sample_bytes,
        loader_cpu,
        server_cpu,
        load,
    )
