"""A test hook: with ``TACO_GDAL_FAULT_PAUSE`` set, :func:`pause_point` sleeps that many seconds.

The kill-loop tests use it so a ``SIGKILL`` often lands between two steps of a
multi-step update; unset, it costs one dictionary lookup.
"""

from __future__ import annotations

import os
import time

__all__ = ["FAULT_PAUSE_ENV", "pause_point"]

FAULT_PAUSE_ENV = "TACO_GDAL_FAULT_PAUSE"


def pause_point() -> None:
    """Sleep ``$TACO_GDAL_FAULT_PAUSE`` seconds if set (tests only)."""
    value = os.environ.get(FAULT_PAUSE_ENV)
    if value:
        time.sleep(float(value))
