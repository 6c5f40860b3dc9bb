"""Bytes for Arrow's threaded readers, copied into Arrow's own memory first.

Arrow decodes Parquet on its worker threads, and a worker may drop the last
reference to the buffer it read from.  A buffer that wraps a Python object
(``pa.py_buffer(bytes)``, ``pa.BufferReader(bytes)``, a Python file) then needs
the GIL to be freed; while the interpreter is shutting down, taking the GIL
ends the thread inside C++ and the whole process aborts with "terminate called
without an active exception" (apache/arrow#33975).  It was seen at the exit of
processes that had loaded datasets.  A copy in Arrow's pool costs one
``memcpy`` of the metadata bytes and frees without Python.
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
