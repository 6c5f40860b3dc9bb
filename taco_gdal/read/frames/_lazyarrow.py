"""Arrow-backed pandas columns computed on first use, a row at a time when only rows are asked.

Taking rows computes only those rows; anything else computes the whole column
once, under a lock.  The function must be pure: copies share it.

Example:
    >>> calls = []
    >>> def blobs(rows):
    ...     calls.append(None if rows is None else rows.tolist())
    ...     every = np.arange(3) if rows is None else rows
    ...     return pa.array([bytes([i]) for i in every], pa.binary())
    >>> column = pd.Series(LazyArrowArray.lazy(blobs, 3, pa.binary()))
    >>> len(column), calls
    (3, [])
    >>> column.iloc[2], calls
    (b'\\x02', [[2]])
    >>> column.tolist()[0], calls[-1]
    (b'\\x00', None)
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from pandas.arrays import ArrowExtensionArray

__all__ = ["LazyArrowArray", "LazyRows", "RowArrays"]

RowArrays = Callable[[np.ndarray | None], pa.Array | pa.ChunkedArray]
"""Row positions (``None``: every row) -> their values, as an Arrow array."""


class _Cell:
    """What a lazy array and its views share: the function, and its result once computed."""

    def __init__(self, compute: RowArrays, length: int, normalise: RowNormaliser) -> None:
        self.compute = compute
        self.length = length
        self.normalise = normalise
        self.lock = threading.Lock()
        self.values: pa.ChunkedArray | None = None

    def rows(self, positions: np.ndarray | None) -> pa.ChunkedArray:
        return self.normalise(self.compute(positions))

    def every(self) -> pa.ChunkedArray:
        values = self.values
        if values is None:
            with self.lock:
                if self.values is None:
                    computed = self.rows(None)
                    if len(computed) != self.length:
                        raise ValueError(
                            f"lazy column: expected {self.length} rows, the source gave "
                            f"{len(computed)}"
                        )
                    self.values = computed
                values = self.values
        return values


RowNormaliser = Callable[[pa.Array | pa.ChunkedArray], pa.ChunkedArray]


class LazyRows:
    """The laziness of an Arrow-backed pandas array, mixed in before the array class (which
    gives :meth:`_eager`, a plain array over values, and :meth:`_normalise`)."""

    _cell: _Cell | None = None
    """``None`` (class default) for the eager arrays pandas derives from a lazy one."""
    _dtype: Any
    _cache: dict[str, Any]
    _readonly: bool

    @classmethod
    def _normalise(cls, values: pa.Array | pa.ChunkedArray, dtype: Any) -> pa.ChunkedArray:
        raise NotImplementedError

    @classmethod
    def _eager(cls, values: pa.ChunkedArray, dtype: Any) -> Any:
        raise NotImplementedError

    @classmethod
    def _over(cls, compute: RowArrays | _Cell, length: int, dtype: Any) -> Any:
        if isinstance(compute, _Cell):
            cell = compute
        else:
            cell = _Cell(compute, int(length), functools.partial(cls._normalise, dtype=dtype))
        array = cls.__new__(cls)
        array._cell = cell
        array._dtype = dtype
        array._readonly = False
        array._cache = {}
        return array

    @property
    def _pa_array(self) -> pa.ChunkedArray:
        values: pa.ChunkedArray | None = self.__dict__.get("_values")
        if values is None:
            if self._cell is None:
                raise AttributeError("_pa_array")
            values = self._cell.every()
        return values

    @_pa_array.setter
    def _pa_array(self, value: pa.ChunkedArray) -> None:
        self.__dict__["_values"] = value
        self._cell = None

    @property
    def computed(self) -> bool:
        """True once the values exist (always, for an eager array)."""
        return self._cell is None or self._cell.values is not None

    def _rows(self, positions: np.ndarray) -> Any:
        rows = np.asarray(positions, dtype=np.int64)
        if self.computed:
            return self._eager(self._pa_array.take(pa.array(rows, pa.int64())), self._dtype)
        assert self._cell is not None
        return self._eager(self._cell.rows(rows), self._dtype)

    def __len__(self) -> int:
        return len(self._pa_array) if self.computed else self._cell.length  # type: ignore[union-attr]

    @property
    def nbytes(self) -> int:
        return int(super().nbytes) if self.computed else 0  # type: ignore[misc]

    def copy(self) -> Any:
        if self.computed:
            return self._eager(self._pa_array, self._dtype)
        return self._over(self._cell, len(self), self._dtype)  # type: ignore[arg-type]

    def view(self, dtype: Any = None) -> Any:
        if dtype is None and not self.computed:
            return self._over(self._cell, len(self), self._dtype)  # type: ignore[arg-type]
        return super().view(dtype)  # type: ignore[misc]

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickles as the plain array it stands for (the function may not pickle).
        return (type(self)._eager, (self._pa_array, self._dtype))

    def __getitem__(self, item: Any) -> Any:
        if self.computed:
            return super().__getitem__(item)  # type: ignore[misc]
        length = len(self)
        if isinstance(item, (int, np.integer)):
            position = int(item) + (length if int(item) < 0 else 0)
            if not 0 <= position < length:
                raise IndexError(f"index {item} is out of bounds for {length} values")
            return self._rows(np.array([position]))[0]
        if not isinstance(item, slice):
            item = pd.api.indexers.check_array_indexer(self, item)  # type: ignore[call-overload]
        return self._rows(np.arange(length)[item])

    def take(self, indices: Any, allow_fill: bool = False, fill_value: Any = None) -> Any:
        positions = np.asarray(indices, dtype=np.int64)
        length = len(self)
        if self.computed or (allow_fill and bool((positions < 0).any())):
            return super().take(indices, allow_fill=allow_fill, fill_value=fill_value)  # type: ignore[misc]
        if positions.size and (positions.min() < -length or positions.max() >= length):
            raise IndexError(f"take: indices out of bounds for {length} values")
        return self._rows(np.where(positions < 0, positions + length, positions))


class LazyArrowArray(LazyRows, ArrowExtensionArray):  # type: ignore[misc]
    """An ``ArrowExtensionArray`` (``pd.ArrowDtype``) of ``length`` rows ``compute`` builds."""

    @classmethod
    def lazy(cls, compute: RowArrays, length: int, kind: pa.DataType) -> LazyArrowArray:
        """A lazy column of ``length`` rows of Arrow type ``kind``."""
        array: LazyArrowArray = cls._over(compute, length, pd.ArrowDtype(kind))
        return array

    @classmethod
    def _normalise(cls, values: pa.Array | pa.ChunkedArray, dtype: Any) -> pa.ChunkedArray:
        chunked = values if isinstance(values, pa.ChunkedArray) else pa.chunked_array([values])
        return chunked.cast(dtype.pyarrow_dtype)

    @classmethod
    def _eager(cls, values: pa.ChunkedArray, dtype: Any) -> ArrowExtensionArray:
        return ArrowExtensionArray(values)
