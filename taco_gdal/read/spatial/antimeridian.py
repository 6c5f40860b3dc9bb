"""Footprints that cross the antimeridian, cut at 180 degrees into parts within [-180, 180]."""

from __future__ import annotations

from typing import Any, Final

import numpy as np
import shapely

__all__ = ["crossing_rows", "fix_antimeridian"]

_WORLD: Final = (-180.0, -90.0, 180.0, 90.0)


def crossing_rows(lon: np.ndarray, index: np.ndarray) -> np.ndarray:
    """Geometry indices with a jump of more than 180 degrees between consecutive vertices."""
    if lon.size < 2:
        return np.empty(0, dtype=np.int64)
    jump = (np.abs(np.diff(lon)) > 180.0) & (index[1:] == index[:-1])
    return np.unique(index[1:][jump])


def _shift_east(coords: np.ndarray) -> np.ndarray:
    shifted = coords.copy()
    shifted[:, 0] = np.where(shifted[:, 0] < 0, shifted[:, 0] + 360.0, shifted[:, 0])
    return shifted


def _cut_at_antimeridian(geom: Any) -> Any:
    """A geometry with longitudes in [-180, 540) cut at 180 (and 540) into parts in [-180, 180]."""
    parts = []
    for shift, box in ((0.0, _WORLD), (-360.0, (180.0, -90.0, 540.0, 90.0))):
        piece = shapely.intersection(geom, shapely.box(*box))
        if not piece.is_empty:
            parts.append(shapely.transform(piece, lambda c, s=shift: c + np.array([s, 0.0])))
    return shapely.union_all(parts) if len(parts) > 1 else parts[0] if parts else geom


def fix_antimeridian(geoms: np.ndarray, crossing: np.ndarray) -> None:
    for i in crossing:
        geoms[i] = _cut_at_antimeridian(shapely.transform(geoms[i], _shift_east))
    bounds = shapely.bounds(geoms)
    outside = np.flatnonzero((bounds[:, 0] < -180.0) | (bounds[:, 2] > 180.0))
    for i in outside:  # stored in 4326 past 180 (179 .. 181) or before -180 (-181 .. -179)
        geom = geoms[i]
        if bounds[i, 0] < -180.0:
            geom = shapely.transform(geom, lambda c: c + np.array([360.0, 0.0]))
        geoms[i] = _cut_at_antimeridian(geom)
