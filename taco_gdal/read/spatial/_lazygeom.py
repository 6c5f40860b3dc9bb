"""A geometry column computed on first use: footprints of a big frame cost nothing until touched.

Taking rows (``head``, ``iloc``, masks, ``repr``) computes only those rows;
anything needing them all computes them once, under a lock.  The function must
be pure: copies share it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from geopandas.array import GeometryArray

__all__ = ["LazyGeometryArray", "RowGeometries"]

RowGeometries = Callable[[np.ndarray | None], np.ndarray]
"""Row positions (``None``: every row) -> a numpy object array of shapely geometries."""


class LazyGeometryArray(GeometryArray):  # type: ignore[misc]
    """A GeometryArray of ``length`` rows whose geometries ``compute`` builds when needed."""

    def __init__(self, compute: RowGeometries, length: int, crs: Any = None) -> None:
        # GeometryArray.__init__ wants the geometries; this class has none yet.
        self._compute = compute
        self._length = int(length)
        self._geoms: np.ndarray | None = None
        self._lock = threading.Lock()
        self._crs = None
        self.crs = crs
        self._sindex = None

    @property  # type: ignore[override]
    def _data(self) -> np.ndarray:
        geoms = self._geoms
        if geoms is None:
            with self._lock:
                if self._geoms is None:
                    computed = np.asarray(self._compute(None), dtype=object)
                    if computed.shape != (self._length,):
                        raise ValueError(
                            f"lazy geometries: expected {self._length} rows, the source "
                            f"gave {computed.shape}"
                        )
                    self._geoms = computed
                geoms = self._geoms
        return geoms

    @_data.setter
    def _data(self, value: np.ndarray) -> None:
        self._geoms = value

    @property
    def computed(self) -> bool:
        """True once every geometry exists (after a whole-array operation)."""
        return self._geoms is not None

    def _rows(self, positions: np.ndarray) -> GeometryArray:
        rows = np.asarray(positions, dtype=np.int64)
        if self._geoms is not None:
            return GeometryArray(self._geoms[rows], crs=self.crs)
        return GeometryArray(np.asarray(self._compute(rows), dtype=object), crs=self.crs)

    @property
    def size(self) -> int:
        return self._length

    @property
    def shape(self) -> tuple[int]:
        return (self._length,)

    def __len__(self) -> int:
        return self._length

    @property
    def nbytes(self) -> int:
        return self._length * 8 if self._geoms is None else int(super().nbytes)

    def copy(self, *args: Any, **kwargs: Any) -> GeometryArray:
        if self._geoms is not None:
            return super().copy(*args, **kwargs)
        return LazyGeometryArray(self._compute, self._length, crs=self.crs)

    def __getitem__(self, idx: Any) -> Any:
        if self._geoms is not None:
            return super().__getitem__(idx)
        if isinstance(idx, (int, np.integer)):
            position = int(idx) + (self._length if int(idx) < 0 else 0)
            if not 0 <= position < self._length:
                raise IndexError(f"index {idx} is out of bounds for {self._length} geometries")
            return self._rows(np.array([position]))._data[0]
        if isinstance(idx, slice) and idx == slice(None):
            return self.copy()
        if not isinstance(idx, slice):
            idx = pd.api.indexers.check_array_indexer(self, idx)
        return self._rows(np.arange(self._length)[idx])

    def take(self, indices: Any, allow_fill: bool = False, fill_value: Any = None) -> GeometryArray:
        positions = np.asarray(indices, dtype=np.int64)
        if self._geoms is not None or (allow_fill and bool((positions < 0).any())):
            return super().take(indices, allow_fill=allow_fill, fill_value=fill_value)
        if positions.size and (positions.min() < -self._length or positions.max() >= self._length):
            raise IndexError(f"take: indices out of bounds for {self._length} geometries")
        return self._rows(np.where(positions < 0, positions + self._length, positions))

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickles as the plain array it stands for (the function may not pickle).
        return (GeometryArray, (self._data, self.crs))
