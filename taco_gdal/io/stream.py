"""Stream byte ranges of one file through GDAL in big sequential reads, feeding sinks.

Each :class:`Span` (a member's CRC-32, a sample's digest) has a sink fed its
bytes in order. Close spans are merged into regions read in :data:`BLOCK`
blocks by a reader thread while this thread feeds the sinks (the checksums
release the GIL); at most :data:`QUEUE` blocks are in flight, so memory stays
bounded.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from taco_gdal.errors import TacoError, TacoIOError
from taco_gdal.io.vsi import VSIFile

__all__ = ["BLOCK", "Span", "stream_spans"]

BLOCK: Final = 2 * 1024 * 1024
GAP: Final = 1024 * 1024
QUEUE: Final = 8


@dataclass(slots=True)
class Span:
    """Bytes ``[start, end)`` of the file, to be passed to ``sink`` in order."""

    start: int
    end: int
    sink: Callable[[memoryview], None]


def _regions(spans: Sequence[Span]) -> list[tuple[int, int]]:
    regions: list[tuple[int, int]] = []
    for span in sorted(spans, key=lambda s: s.start):
        if regions and span.start - regions[-1][1] <= GAP:
            regions[-1] = (regions[-1][0], max(regions[-1][1], span.end))
        else:
            regions.append((span.start, span.end))
    return regions


def _blocks(path: str, regions: list[tuple[int, int]], block: int) -> Iterator[tuple[int, bytes]]:
    """``(offset, bytes)`` of every block, read ahead by a thread."""
    out: queue.Queue[tuple[int, bytes] | BaseException | None] = queue.Queue(QUEUE)
    stop = threading.Event()

    def reader() -> None:
        try:
            with VSIFile(path) as f:
                for start, end in regions:
                    pos = start
                    while pos < end and not stop.is_set():
                        data = f.read_at(pos, min(block, end - pos))
                        if not data:
                            raise TacoIOError(
                                f"{path}: expected bytes up to offset {end}, the file ends at {pos}"
                            )
                        out.put((pos, data))
                        pos += len(data)
            out.put(None)
        except BaseException as exc:  # handed to the consumer, re-raised there
            out.put(exc)

    thread = threading.Thread(target=reader, name="taco-verify-read", daemon=True)
    thread.start()
    try:
        while True:
            item = out.get()
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        while thread.is_alive():  # unblock a reader waiting on a full queue
            try:
                out.get_nowait()
            except queue.Empty:
                thread.join(0.05)


def stream_spans(path: str, spans: Sequence[Span], block: int = BLOCK) -> int:
    """Feed every span's bytes to its sink; return the bytes read (TacoIOError if short)."""
    if not spans:
        return 0
    ordered = sorted(spans, key=lambda s: s.start)
    total = 0
    pending = 0
    active: list[Span] = []
    try:
        for offset, data in _blocks(path, _regions(ordered), block):
            end = offset + len(data)
            total += len(data)
            while pending < len(ordered) and ordered[pending].start < end:
                active.append(ordered[pending])
                pending += 1
            view = memoryview(data)
            for span in active:
                lo, hi = max(span.start, offset), min(span.end, end)
                if lo < hi:
                    span.sink(view[lo - offset : hi - offset])
            active = [s for s in active if s.end > end]
    except TacoError:
        raise
    except (OSError, RuntimeError) as exc:
        raise TacoIOError(f"{path}: cannot stream its bytes: {exc}") from exc
    return total
