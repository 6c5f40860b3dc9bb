"""Bytes for Arrow's threaded readers, copied into Arrow's own memory first.

An Arrow worker may drop the last reference to a buffer wrapping a Python
object, which then needs the GIL to be freed; at interpreter shutdown that
aborts the process (apache/arrow#33975). A copy in Arrow's pool frees without
Python.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

__all__ = ["owned", "owned_reader"]


def owned(data: Any) -> pa.Buffer:
    """A copy of ``data`` (bytes, or any object with the buffer protocol) in Arrow's memory.

    Example:
        >>> owned(b"PAR1").to_pybytes()
        b'PAR1'
    """
    view = memoryview(data).cast("B")
    out = pa.allocate_buffer(len(view))
    memoryview(out).cast("B")[:] = view
    return out


def owned_reader(data: Any) -> pa.BufferReader:
    """A reader over :func:`owned` bytes, for ``pq.ParquetFile`` and ``pq.read_table``.

    Example:
        >>> owned_reader(b"abc").read()
        b'abc'
    """
    return pa.BufferReader(owned(data))
