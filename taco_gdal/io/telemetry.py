"""Requests and bytes per remote file, from GDAL's own network statistics.

GDAL 3.6 reads ``CPL_VSIL_NETWORK_STATS_ENABLED`` once, at the first request
after ``NetworkStatsReset()``, so the outermost block resets with it set and
again on exit with it unset. Blocks may nest; ``/vsisubfile/`` reads count
against their container.

Example:
    >>> from osgeo import gdal
    >>> from taco_gdal.io.telemetry import network_stats
    >>> gdal.VSICurlClearCache()  # a cold start, nothing of the file cached
    >>> with network_stats() as stats:  # url: a Range server on 127.0.0.1
    ...     ds = taco_gdal.load(url)
    >>> stats.requests()  # the size, the TACO_HEADER, then all metadata members in one range
    3
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Final

from osgeo import gdal

from taco_gdal._fork import after_fork_in_child
from taco_gdal.env import Env, get_config

__all__ = ["FileTraffic", "NetworkStats", "network_stats", "snapshot"]

_OPTION: Final = "CPL_VSIL_NETWORK_STATS_ENABLED"
_ON: Final = frozenset({"YES", "ON", "TRUE", "1"})
_lock = threading.Lock()
_depth = 0
_owner = False


def _reset_in_child() -> None:
    """A forked child gets a new lock and no open measurement (its parent's threads are gone)."""
    global _lock, _depth, _owner
    _lock = threading.Lock()
    _depth = 0
    _owner = False


after_fork_in_child(_reset_in_child)


@dataclass(frozen=True, slots=True)
class FileTraffic:
    """Requests (per HTTP method) and downloaded bytes for one remote file."""

    path: str
    requests: Mapping[str, int]
    bytes_downloaded: int

    @property
    def total_requests(self) -> int:
        return sum(self.requests.values())


def _walk(node: Mapping[str, Any], out: dict[str, dict[str, list[int]]]) -> None:
    """Collect ``methods`` of every file node; file nodes already aggregate their actions."""
    for path, file_node in node.get("files", {}).items():
        slot = out.setdefault(path, {})
        for method, counts in file_node.get("methods", {}).items():
            pair = slot.setdefault(method, [0, 0])
            pair[0] += int(counts.get("count", 0))
            pair[1] += int(counts.get("downloaded_bytes", 0))
    for child in node.get("actions", {}).values():
        _walk(child, out)


def snapshot() -> dict[str, FileTraffic]:
    """GDAL's cumulative counters now, per file (empty while statistics are off)."""
    text = gdal.NetworkStatsGetAsSerializedJSON()
    tree: Mapping[str, Any] = json.loads(text) if text else {}
    raw: dict[str, dict[str, list[int]]] = {}
    for handler in tree.get("handlers", {}).values():
        _walk(handler, raw)
    return {
        path: FileTraffic(
            path,
            {method: pair[0] for method, pair in methods.items()},
            sum(pair[1] for pair in methods.values()),
        )
        for path, methods in raw.items()
    }


def _difference(after: FileTraffic, before: FileTraffic | None) -> FileTraffic:
    if before is None:
        return after
    methods = {
        m: n - before.requests.get(m, 0)
        for m, n in after.requests.items()
        if n - before.requests.get(m, 0)
    }
    return FileTraffic(after.path, methods, after.bytes_downloaded - before.bytes_downloaded)


@dataclass
class NetworkStats:
    """What a :func:`network_stats` block cost; ``files`` is filled when the block ends."""

    files: dict[str, FileTraffic] = field(default_factory=dict)
    _start: dict[str, FileTraffic] = field(default_factory=dict, repr=False)

    def current(self) -> dict[str, FileTraffic]:
        """The traffic since the block started, per file (also usable inside the block)."""
        now = snapshot()
        out = {p: _difference(t, self._start.get(p)) for p, t in now.items()}
        return {p: t for p, t in out.items() if t.total_requests or t.bytes_downloaded}

    def requests(self, method: str | None = None, path: str | None = None) -> int:
        """Requests of ``method`` (all methods if ``None``) to files ending with ``path``."""
        return sum(
            t.requests.get(method, 0) if method else t.total_requests
            for p, t in self.files.items()
            if path is None or p.endswith(path)
        )

    @property
    def bytes_downloaded(self) -> int:
        return sum(t.bytes_downloaded for t in self.files.values())


def _enter() -> None:
    global _depth, _owner
    with _lock:
        if _depth == 0 and (get_config(_OPTION) or "NO").upper() not in _ON:
            with Env(read_profile=False, **{_OPTION: "YES"}):
                gdal.NetworkStatsReset()
            _owner = True
        _depth += 1


def _exit() -> None:
    global _depth, _owner
    with _lock:
        _depth -= 1
        if _depth == 0 and _owner:
            with Env(read_profile=False, **{_OPTION: None}):
                gdal.NetworkStatsReset()
            _owner = False


@contextmanager
def network_stats() -> Iterator[NetworkStats]:
    """Count GDAL's HTTP requests and bytes per file during a block.

    Example:
        >>> with network_stats() as stats:
        ...     pass
        >>> stats.requests()
        0
    """
    _enter()
    try:
        with Env(read_profile=False, **{_OPTION: "YES"}):
            stats = NetworkStats(_start=snapshot())
            try:
                yield stats
            finally:
                stats.files = stats.current()
    finally:
        _exit()
