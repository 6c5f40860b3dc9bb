"""Fault plans for the test servers: answer an error status N times, or drop mid-body."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Literal

FaultKind = Literal["status", "drop"]


@dataclass(slots=True)
class Fault:
    """A planned misbehaviour for requests whose path ends with ``path``.

    ``kind="status"`` answers ``status`` with a short body instead of the real
    answer; ``kind="drop"`` announces the full body, sends ``after_bytes`` of it
    and closes the connection.  ``times=None`` means for ever.
    """

    path: str
    kind: FaultKind
    times: int | None
    status: int = 503
    after_bytes: int = 0
    methods: frozenset[str] = frozenset({"GET", "HEAD"})

    def matches(self, method: str, path: str, kind: FaultKind, length: int | None) -> bool:
        if kind != self.kind or method not in self.methods or not path.endswith(self.path):
            return False
        return kind != "drop" or (length is not None and length > self.after_bytes)


class FaultPlan:
    """Faults waiting to fire; a request takes at most one of each kind (first planned first)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: list[Fault] = []

    def add(self, fault: Fault) -> None:
        with self._lock:
            self._faults.append(fault)

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def take(
        self, method: str, path: str, kind: FaultKind, length: int | None = None
    ) -> Fault | None:
        """The fault of ``kind`` this request must suffer, counting it as used.

        A drop fault only takes a body longer than its ``after_bytes``.
        """
        with self._lock:
            for fault in self._faults:
                if fault.matches(method, path, kind, length):
                    if fault.times is not None:
                        fault.times -= 1
                        if fault.times <= 0:
                            self._faults.remove(fault)
                    return fault
        return None
