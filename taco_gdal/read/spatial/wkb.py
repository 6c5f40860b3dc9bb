"""WKB columns read with numpy: simple one-ring polygons never become shapely objects."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import pyarrow as pa
import shapely

from taco_gdal.errors import TacoQueryError

__all__ = ["WkbColumn", "concat_ranges"]

_WKB_HEADER: Final = 13
"""Bytes before the coordinates of a one-ring WKB polygon (order, type, rings, points)."""


@dataclass(frozen=True, eq=False)
class WkbColumn:
    """A WKB column's raw bytes, with the rows that are simple polygons found by numpy.

    A *simple* row (little-endian 2D Polygon, one closed ring of 4+ points) is read
    straight from the Arrow buffer; any other row goes through ``shapely.from_wkb``.
    """

    array: pa.Array
    data: np.ndarray
    start: np.ndarray
    points: np.ndarray
    simple: np.ndarray

    @classmethod
    def of(cls, column: pa.ChunkedArray | pa.Array) -> WkbColumn:
        """Parse the headers of every row of ``column`` (binary or large binary)."""
        array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        n = len(array)
        _, offsets_buf, data_buf = array.buffers()
        wide = pa.types.is_large_binary(array.type)
        offsets = np.frombuffer(offsets_buf, dtype=np.int64 if wide else np.int32)
        offsets = offsets[array.offset : array.offset + n + 1].astype(np.int64)
        data = (
            np.frombuffer(data_buf, dtype=np.uint8)
            if data_buf is not None
            else np.empty(0, dtype=np.uint8)
        )
        start, length = offsets[:-1], np.diff(offsets)
        valid = np.asarray(array.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        simple = valid & (length >= _WKB_HEADER + 16 * 4)
        head = start[simple]
        points = np.zeros(n, dtype=np.int64)
        if head.size:
            order = data[head]
            kind, rings, count = (_uint32(data, head + at) for at in (1, 5, 9))
            ok = (order == 1) & (kind == 3) & (rings == 1) & (count >= 4)
            ok &= length[simple] == _WKB_HEADER + 16 * count
            first = np.where(ok, head + _WKB_HEADER, 0)  # 0: rows already refused
            last = np.where(ok, first + 16 * (count - 1), 0)
            for k in range(16):  # the ring is closed, byte for byte (else shapely decides)
                ok &= data[first + k] == data[last + k]
            points[np.flatnonzero(simple)] = np.where(ok, count, 0)
            simple[np.flatnonzero(simple)] = ok
        return cls(array, data, start, points, simple)

    def rings(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(coords, starts)`` of simple rows: ``(m, 2)`` floats and ``len(rows) + 1`` offsets."""
        counts = self.points[rows]
        starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        coords = np.empty((int(starts[-1]), 2), dtype=np.float64)
        first = self.start[rows] + _WKB_HEADER
        residue = first % 8
        for r in np.unique(residue):  # doubles are read through an aligned view per residue
            pick = np.flatnonzero(residue == r)
            usable = (len(self.data) - int(r)) // 8 * 8
            doubles = self.data[int(r) : int(r) + usable].view("<f8")
            size = 2 * counts[pick]
            target = np.repeat(2 * starts[pick], size) + concat_ranges(size)
            source = np.repeat((first[pick] - r) // 8, size) + concat_ranges(size)
            coords.reshape(-1)[target] = doubles[source]
        return coords, starts

    def decode(self, rows: np.ndarray, where: str, column: str) -> np.ndarray:
        """Shapely geometries of rows ``rows`` (None for nulls)."""
        values = np.asarray(
            self.array.take(pa.array(rows, pa.int64())).to_numpy(zero_copy_only=False),
            dtype=object,
        )
        try:
            return np.asarray(shapely.from_wkb(values, on_invalid="raise"), dtype=object)
        except shapely.errors.GEOSException as exc:
            raise TacoQueryError(f"{where}: column {column!r} holds invalid WKB: {exc}") from exc


def _uint32(data: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Little-endian uint32 at byte positions ``at`` of ``data``."""
    value: np.ndarray = data[at].astype(np.int64)
    for k in (1, 2, 3):
        value |= data[at + k].astype(np.int64) << (8 * k)
    return value


def concat_ranges(sizes: np.ndarray) -> np.ndarray:
    """``0 .. size - 1`` for each of ``sizes``, concatenated."""
    total = int(sizes.sum())
    before = np.repeat(np.cumsum(sizes) - sizes, sizes)
    ramp: np.ndarray = np.arange(total, dtype=np.int64) - before
    return ramp
