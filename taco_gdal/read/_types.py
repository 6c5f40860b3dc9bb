"""Arrow type tests the reader makes in many places, stated once."""

from __future__ import annotations

import pyarrow as pa

__all__ = ["is_binary"]


def is_binary(kind: pa.DataType) -> bool:
    """True for ``binary`` and ``large_binary``: how WKB geometries and blobs are stored.

    Example:
        >>> is_binary(pa.large_binary()), is_binary(pa.string())
        (True, False)
    """
    return bool(pa.types.is_binary(kind) or pa.types.is_large_binary(kind))
