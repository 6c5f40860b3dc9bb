"""A string column computed on first use: a million GDAL paths cost nothing until touched.

``.data`` of a million-row level would otherwise build a million
``/vsisubfile/<offset>_<size>,<container>`` strings (about 80 MB and a tenth of
a second) before returning, even when the user only looks at ``head()`` or
reads one sample.  :class:`LazyStringArray` is pandas' own string array
(:class:`pandas.arrays.ArrowStringArray`, the ``str`` dtype) whose values a
function of row positions computes:

* ``len``, the dtype and building the frame cost nothing;
* taking rows (``head``, ``iloc``, masks, ``repr``, ``frame.read(i)``)
  computes only those rows;
* anything else (comparisons, ``.str``, ``tolist``, pickling) computes the
  whole column once, under a lock, and from then on the array is an ordinary
  ``ArrowStringArray``.

The arrays pandas derives from one (``type(self).__new__`` then
``_pa_array = ...``, or ``type(self)(values)``) are eager: laziness is only
what :meth:`LazyStringArray.lazy` builds.  The function must be pure (same
positions, same strings): copies share it.

Example:
    >>> calls = []
    >>> def names(rows):
    ...     calls.append(None if rows is None else rows.tolist())
    ...     every = np.arange(3) if rows is None else rows
    ...     return pa.array([f"s{i}" for i in every])
    >>> column = pd.Series(LazyStringArray.lazy(names, 3))
    >>> len(column), calls
    (3, [])
    >>> column.iloc[2], calls
    ('s2', [[2]])
    >>> (column == "s1").tolist(), calls[-1]
    ([False, True, False], None)
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from pandas.arrays import ArrowStringArray

__all__ = ["LazyStringArray", "RowStrings", "string_dtype"]

RowStrings = Callable[[np.ndarray | None], pa.Array | pa.ChunkedArray]
"""Row positions (``None``: every row) -> their strings, as an Arrow string array."""


def string_dtype() -> pd.StringDtype | None:
    """The dtype pandas gives an Arrow string column, if it is the Arrow-backed ``str``.

    ``None`` under pandas options that convert strings to Python objects:
    the lazy column is then not used (it would change the column's dtype).
    """
    dtype = pa.array([], pa.string()).to_pandas().dtype
    if isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow":
        return dtype
    return None


def _as_chunked(values: pa.Array | pa.ChunkedArray) -> pa.ChunkedArray:
    chunked = values if isinstance(values, pa.ChunkedArray) else pa.chunked_array([values])
    return chunked.cast(pa.large_string())


def _eager(values: pa.ChunkedArray, dtype: pd.StringDtype | None) -> ArrowStringArray:
    """A plain ``ArrowStringArray`` (what pickling a lazy array gives back)."""
    return ArrowStringArray(values, dtype=dtype)  # type: ignore[call-arg]


class _Cell:
    """What a lazy array and its views share: the function, and its result once computed."""

    def __init__(self, compute: RowStrings, length: int) -> None:
        self.compute = compute
        self.length = length
        self.lock = threading.Lock()
        self.values: pa.ChunkedArray | None = None

    def every(self) -> pa.ChunkedArray:
        values = self.values
        if values is None:
            with self.lock:
                if self.values is None:
                    computed = _as_chunked(self.compute(None))
                    if len(computed) != self.length:
                        raise ValueError(
                            f"lazy strings: expected {self.length} rows, the source gave "
                            f"{len(computed)}"
                        )
                    self.values = computed
                values = self.values
        return values


class LazyStringArray(ArrowStringArray):  # type: ignore[misc]
    """An ``ArrowStringArray`` of ``length`` rows whose values ``compute`` builds when needed."""

    _cell: _Cell | None = None
    """``None`` (class default) for the eager arrays pandas derives from a lazy one."""
    _dtype: pd.StringDtype | None
    _cache: dict[str, Any]
    _readonly: bool

    @classmethod
    def lazy(
        cls, compute: RowStrings, length: int, dtype: pd.StringDtype | None = None
    ) -> LazyStringArray:
        """A lazy column of ``length`` rows (``dtype``: pandas' default Arrow ``str``)."""
        return cls._over(_Cell(compute, int(length)), dtype or string_dtype())

    @classmethod
    def _over(cls, cell: _Cell, dtype: pd.StringDtype | None) -> LazyStringArray:
        array = cls.__new__(cls)
        array._cell = cell
        array._dtype = dtype
        array._readonly = False
        array._cache = {}
        return array

    # --- the one place the whole column is computed ---------------------------
    @property  # type: ignore[override]
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

    def _rows(self, positions: np.ndarray) -> ArrowStringArray:
        rows = np.asarray(positions, dtype=np.int64)
        if self.computed:
            return _eager(self._pa_array.take(pa.array(rows, pa.int64())), self._dtype)
        assert self._cell is not None
        return _eager(_as_chunked(self._cell.compute(rows)), self._dtype)

    # --- what costs nothing ---------------------------------------------------
    def __len__(self) -> int:
        return len(self._pa_array) if self.computed else self._cell.length  # type: ignore[union-attr]

    @property
    def nbytes(self) -> int:
        return int(super().nbytes) if self.computed else 0

    def copy(self) -> ArrowStringArray:  # type: ignore[override]
        if self.computed:
            return _eager(self._pa_array, self._dtype)
        return LazyStringArray._over(self._cell, self._dtype)  # type: ignore[arg-type]

    def view(self, dtype: Any = None) -> Any:
        if dtype is None and not self.computed:
            return LazyStringArray._over(self._cell, self._dtype)  # type: ignore[arg-type]
        return super().view(dtype)

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickles as the plain array it stands for (the function may not pickle).
        return (_eager, (self._pa_array, self._dtype))

    # --- what computes only the rows asked for --------------------------------
    def __getitem__(self, item: Any) -> Any:
        if self.computed:
            return super().__getitem__(item)
        length = len(self)
        if isinstance(item, (int, np.integer)):
            position = int(item) + (length if int(item) < 0 else 0)
            if not 0 <= position < length:
                raise IndexError(f"index {item} is out of bounds for {length} strings")
            return self._rows(np.array([position]))[0]
        if not isinstance(item, slice):
            item = pd.api.indexers.check_array_indexer(self, item)
        return self._rows(np.arange(length)[item])

    def take(self, indices: Any, allow_fill: bool = False, fill_value: Any = None) -> Any:
        positions = np.asarray(indices, dtype=np.int64)
        length = len(self)
        if self.computed or (allow_fill and bool((positions < 0).any())):
            return super().take(indices, allow_fill=allow_fill, fill_value=fill_value)
        if positions.size and (positions.min() < -length or positions.max() >= length):
            raise IndexError(f"take: indices out of bounds for {length} strings")
        return self._rows(np.where(positions < 0, positions + length, positions))
