"""Run one reader in N spawned worker processes and measure it against the server's log.

Each worker: build the reader, wait, open it and read the first sample (timed:
"open + first sample"), wait, then read its own random samples (timed).  The
parent clears the server log at each barrier, so requests and bytes are split
into the open phase and the random-read phase.
"""

from __future__ import annotations

import multiprocessing as mp
import random
import time
from dataclasses import dataclass
from typing import Any

from bench.remote.readers import READERS, Spec
from tests.support.servers.log import RequestRecord
from tests.support.servers.range_server import RangeServer

BARRIER_TIMEOUT = 600.0


@dataclass(frozen=True)
class Phase:
    seconds: float
    samples: int
    requests: int
    heads: int
    bytes: int


@dataclass(frozen=True)
class Run:
    reader: str
    workers: int
    open_first: Phase
    random: Phase
    sample_bytes: float

    @property
    def samples_per_s(self) -> float:
        return self.random.samples / self.random.seconds

    @property
    def requests_per_sample(self) -> float:
        return self.random.requests / self.random.samples

    @property
    def bytes_per_sample(self) -> float:
        return self.random.bytes / self.random.samples

    @property
    def overread(self) -> float:
        """Bytes moved per sample over the mean size of the samples read, minus one."""
        return self.bytes_per_sample / self.sample_bytes - 1


def _worker(name: str, spec: Spec, indices: list[int], barriers: list[Any], queue: Any) -> None:
    reader = READERS[name](spec)
    barriers[0].wait(BARRIER_TIMEOUT)
    start = time.monotonic()
    reader.open()
    reader.read(0)
    opened = time.monotonic() - start
    barriers[1].wait(BARRIER_TIMEOUT)
    barriers[2].wait(BARRIER_TIMEOUT)
    begin = time.monotonic()
    for index in indices:
        reader.read(index)
    queue.put({"open": opened, "begin": begin, "end": time.monotonic(), "n": len(indices)})


def _phase(records: list[RequestRecord], seconds: float, samples: int) -> Phase:
    return Phase(
        seconds,
        samples,
        len(records),
        sum(r.method == "HEAD" for r in records),
        sum(r.bytes_sent for r in records),
    )


def run(
    name: str, spec: Spec, server: RangeServer, workers: int, per_worker: int, sizes: list[int]
) -> Run:
    """Measure ``name`` with ``workers`` processes reading ``per_worker`` random samples each."""
    context = mp.get_context("spawn")
    barriers = [context.Barrier(workers + 1) for _ in range(3)]
    queue = context.Queue()
    plans = [
        random.Random(1000 * workers + w).sample(range(1, len(spec.ids)), per_worker)
        for w in range(workers)
    ]
    procs = [
        context.Process(target=_worker, args=(name, spec, plan, barriers, queue), daemon=True)
        for plan in plans
    ]
    for proc in procs:
        proc.start()
    try:
        barriers[0].wait(BARRIER_TIMEOUT)
        server.log.clear()
        barriers[1].wait(BARRIER_TIMEOUT)
        open_records = server.log.records()
        server.log.clear()
        barriers[2].wait(BARRIER_TIMEOUT)
        results = [queue.get(timeout=BARRIER_TIMEOUT) for _ in procs]
    finally:
        for proc in procs:
            proc.join(timeout=60)
            if proc.is_alive():
                proc.terminate()
    read_records = server.log.records()
    seconds = max(r["end"] for r in results) - min(r["begin"] for r in results)
    total = sum(r["n"] for r in results)
    opened = sorted(r["open"] for r in results)[len(results) // 2]
    read_sizes = [sizes[i] for plan in plans for i in plan]
    return Run(
        name,
        workers,
        _phase(open_records, opened, workers),
        _phase(read_records, seconds, total),
        sum(read_sizes) / len(read_sizes),
    )
