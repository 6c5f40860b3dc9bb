"""A string column computed on first use: a million GDAL paths cost nothing until touched.

pandas' own ``str`` array made lazy by :class:`~taco_gdal.read.frames._lazyarrow.LazyRows`.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pyarrow as pa
from pandas.arrays import ArrowStringArray

from taco_gdal.read.frames._lazyarrow import LazyRows, RowArrays

__all__ = ["LazyStringArray", "RowStrings", "string_dtype"]

RowStrings = RowArrays
"""Row positions (``None``: every row) -> their strings, as an Arrow string array."""


def string_dtype() -> pd.StringDtype | None:
    """The dtype pandas gives an Arrow string column if Arrow-backed ``str``, else None."""
    dtype = pa.array([], pa.string()).to_pandas().dtype
    if isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow":
        return dtype
    return None


class LazyStringArray(LazyRows, ArrowStringArray):  # type: ignore[misc]
    """An ``ArrowStringArray`` of ``length`` rows whose values ``compute`` builds when needed."""

    @classmethod
    def lazy(
        cls, compute: RowStrings, length: int, dtype: pd.StringDtype | None = None
    ) -> LazyStringArray:
        """A lazy column of ``length`` rows (``dtype``: pandas' default Arrow ``str``)."""
        array: LazyStringArray = cls._over(compute, length, dtype or string_dtype())
        return array

    @classmethod
    def _normalise(cls, values: pa.Array | pa.ChunkedArray, dtype: Any) -> pa.ChunkedArray:
        chunked = values if isinstance(values, pa.ChunkedArray) else pa.chunked_array([values])
        return chunked.cast(pa.large_string())

    @classmethod
    def _eager(cls, values: pa.ChunkedArray, dtype: Any) -> ArrowStringArray:
        """A plain ``ArrowStringArray`` (what pickling a lazy array gives back)."""
        return ArrowStringArray(values, dtype=dtype)  # type: ignore[call-arg]
