"""Polling for what another process or thread does: a value once it is there, or a failure
that says what never came."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(
    ready: Callable[[], T | None], what: str, seconds: float = 10.0, step: float = 0.005
) -> T:
    """The first true value of ``ready()``, asked every ``step`` seconds; after ``seconds``
    an AssertionError that ``what`` never happened.

    Example:
        >>> wait_for(lambda: 42, "the answer")
        42
    """
    deadline = time.monotonic() + seconds
    while not (value := ready()):
        assert time.monotonic() < deadline, f"after {seconds} s: {what}"
        time.sleep(step)
    return value
