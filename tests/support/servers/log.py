"""The request log kept by the test servers: one record per answered request."""

from __future__ import annotations

import bisect
import threading
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One request as the server saw and answered it.

    ``range`` is the raw ``Range`` header (``None`` when absent); ``bytes_sent``
    counts body bytes actually written to the socket (fewer than announced when a
    fault dropped the connection or the client hung up).
    """

    method: str
    path: str
    range: str | None
    status: int
    bytes_sent: int


class RequestLog:
    """A thread-safe, append-only list of :class:`RequestRecord`.

    A server calls :meth:`begin` when a request arrives and :meth:`append` once it
    is answered.  The client may see the last body byte before the server thread
    gets to ``append``, so reading the log first waits (up to ``settle`` seconds)
    until no request is in flight: counts taken right after a read are complete.
    Records are kept in the order the requests arrived, not the order their
    handlers finished, so a client's sequential requests read back in its order.
    """

    def __init__(self, settle: float = 5.0) -> None:
        self._cond = threading.Condition()
        self._records: list[RequestRecord] = []
        self._arrivals: list[int] = []
        self._arrived = 0
        self._in_flight = 0
        self.settle = settle

    def begin(self) -> int:
        """Count a request in flight; returns its arrival number, for :meth:`append`."""
        with self._cond:
            self._in_flight += 1
            self._arrived += 1
            return self._arrived

    def append(self, record: RequestRecord, arrival: int) -> None:
        with self._cond:
            at = bisect.bisect(self._arrivals, arrival)
            self._arrivals.insert(at, arrival)
            self._records.insert(at, record)
            self._in_flight -= 1
            self._cond.notify_all()

    def clear(self) -> None:
        with self._cond:
            self._cond.wait_for(lambda: self._in_flight == 0, timeout=self.settle)
            self._records.clear()
            self._arrivals.clear()

    def records(self, path: str | None = None, method: str | None = None) -> list[RequestRecord]:
        """A snapshot, optionally only requests whose path ends with ``path`` / of ``method``."""
        with self._cond:
            self._cond.wait_for(lambda: self._in_flight == 0, timeout=self.settle)
            out = list(self._records)
        if path is not None:
            out = [r for r in out if r.path.endswith(path)]
        if method is not None:
            out = [r for r in out if r.method == method]
        return out

    def count(self, path: str | None = None, method: str | None = None) -> int:
        return len(self.records(path, method))

    def bytes_sent(self, path: str | None = None) -> int:
        return sum(r.bytes_sent for r in self.records(path))

    def describe(self) -> str:
        """The log as text lines, for assertion messages."""
        return "\n".join(
            f"{r.method} {r.path} {r.range or '-'} {r.status} {r.bytes_sent}"
            for r in self.records()
        )
