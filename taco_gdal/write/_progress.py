"""Progress bars for long writes: tqdm on stderr, on by default only on a terminal."""

from __future__ import annotations

import sys
from typing import Any

from tqdm.auto import tqdm

__all__ = ["progress_bar"]


def progress_bar(total: int | None, desc: str, quiet: bool, unit: str = "B") -> tqdm[Any]:
    """A tqdm bar, disabled when ``quiet`` or when stderr is not a terminal.

    Byte bars scale to KB/MB/GB.  Call ``update(n)`` as work is done and close it
    (or use it as a context manager).

    Example:
        >>> with progress_bar(10, "copy", quiet=True) as bar:
        ...     _ = bar.update(10)
    """
    disable = quiet or not sys.stderr.isatty()
    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        unit_scale=unit == "B",
        unit_divisor=1024,
        disable=disable,
        leave=False,
        dynamic_ncols=True,
    )
