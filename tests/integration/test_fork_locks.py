"""A child forked while a parent thread holds taco_gdal's locks can still use pins and stats."""

from __future__ import annotations

import os
import signal
import threading

import taco_gdal
from taco_gdal.io import pinning, telemetry


def _child_uses_pins_and_stats() -> None:
    signal.alarm(10)  # a deadlock ends the child with SIGALRM instead of hanging the test
    with taco_gdal.network_stats():
        pinning.pins.get("/vsicurl/http://127.0.0.1:1/x.tacozip")
    os._exit(0)


def test_child_forked_while_locks_are_held_does_not_deadlock():
    held, release = threading.Event(), threading.Event()

    def hold_locks() -> None:
        with pinning.pins._lock, telemetry._lock:
            held.set()
            release.wait(20)

    holder = threading.Thread(target=hold_locks)
    holder.start()
    assert held.wait(10)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        _child_uses_pins_and_stats()
    release.set()
    holder.join()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the child deadlocked on an inherited lock"
