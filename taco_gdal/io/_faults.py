"""A test hook: pause at the points where a kill is most harmful.

When the environment variable ``TACO_GDAL_FAULT_PAUSE`` holds a number of
seconds, :func:`pause_point` sleeps that long.  The kill-loop tests set it so
that a ``SIGKILL`` sent at a random moment often lands between two steps of a
multi-step update (the renames of a folder swap, the three writes of a header
update).  Unset, it costs one dictionary lookup.
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
