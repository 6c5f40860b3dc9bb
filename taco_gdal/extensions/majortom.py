"""MajorTOM tortilla extension: the grid cell of every sample's centroid.

The Major TOM grid: rows every ``dist_km`` along a meridian, and in each row
columns every ``dist_km`` along the parallel, labelled like
``0100km_0003U_0005R`` (rows U/D of the equator, columns R/L of Greenwich).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pyarrow as pa
import shapely

from taco_gdal.errors import TacoSchemaError, TacoValidationError
from taco_gdal.extensions.base import TortillaExtension

if TYPE_CHECKING:
    from taco_gdal.model.tortilla import Tortilla

__all__ = ["MajorTOM"]

EARTH_RADIUS_KM: Final = 6378.137
_CENTROIDS: Final = ("stac:centroid", "istac:centroid")

FloatArray = np.ndarray[Any, np.dtype[np.float64]]
IntArray = np.ndarray[Any, np.dtype[np.int64]]


def _labels(count: int, zero: int, plus: str, minus: str) -> list[str]:
    return [f"{zero - i:04d}{minus}" for i in range(zero)] + [
        f"{i:04d}{plus}" for i in range(count - zero)
    ]


@dataclass(frozen=True)
class _Row:
    """Western edges of the cells of one latitude row; labels are made on demand."""

    lons: FloatArray
    indices: IntArray
    """Position of each kept column in the full row (columns may be filtered by longitude)."""
    zero: int
    """Full-row position of the column starting at longitude 0."""

    def label(self, column: int) -> str:
        offset = int(self.indices[column]) - self.zero
        return f"{offset:04d}R" if offset >= 0 else f"{-offset:04d}L"


@dataclass(frozen=True)
class MajorTOM(TortillaExtension):
    """``majortom:code`` (string) from each sample's ``stac:centroid`` (or ``istac:centroid``).

    Samples without a centroid (e.g. padding) get null.

    Example:
        >>> grid = MajorTOM(dist_km=100)
        >>> grid.cell(0.5, 0.5)
        '0100km_0000U_0000R'
    """

    dist_km: float = 100.0
    latitude_range: tuple[float, float] = (-85.0, 85.0)
    longitude_range: tuple[float, float] = (-180.0, 180.0)
    sep: str = "_"
    schema_only: bool = False
    _lats: FloatArray = field(init=False, repr=False, compare=False)
    _row_labels: list[str] = field(init=False, repr=False, compare=False)
    _rows: dict[int, _Row] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.dist_km > 0:
            raise TacoValidationError(f"MajorTOM.dist_km: must be positive, found {self.dist_km}")
        divisions = math.ceil(math.pi * EARTH_RADIUS_KM / self.dist_km)
        lats_all = np.sort(np.mod(np.linspace(-90, 90, divisions + 1)[:-1], 180) - 90)
        zero = int(np.searchsorted(lats_all, 0.0, side="left"))
        labels_all = _labels(len(lats_all), zero, "U", "D")
        low, high = self.latitude_range
        keep = (lats_all >= low) & (lats_all <= high)
        lats = lats_all[keep]
        row_labels = [label for label, k in zip(labels_all, keep, strict=True) if k]
        object.__setattr__(self, "_lats", lats)
        object.__setattr__(self, "_row_labels", row_labels)
        object.__setattr__(self, "_rows", {})  # filled on demand: ~2000 rows at 10 km

    def _row(self, index: int) -> _Row:
        row = self._rows.get(index)
        if row is not None:
            return row
        lat = float(self._lats[index])
        circumference = 2.0 * math.pi * EARTH_RADIUS_KM * math.cos(math.radians(lat))
        count = max(1, math.ceil(circumference / self.dist_km))
        lons = np.sort(np.mod(np.linspace(-180.0, 180.0, count + 1)[:-1], 360) - 180)
        hits = np.flatnonzero(lons == 0.0)
        zero = int(hits[0]) if hits.size else int(np.argmin(np.abs(lons)))
        indices = np.arange(lons.size, dtype=np.int64)
        low, high = self.longitude_range
        if low > -180.0 or high < 180.0:
            keep = (lons >= low) & (lons <= high)
            lons, indices = lons[keep], indices[keep]
        row = (
            _Row(lons, indices, zero)
            if lons.size
            else _Row(np.array([-180.0]), np.array([0], dtype=np.int64), 0)
        )
        self._rows[index] = row
        return row

    def cells(self, lats: FloatArray, lons: FloatArray) -> list[str]:
        """Codes of the cells containing each ``(lat, lon)``."""
        row_index = np.clip(
            np.searchsorted(self._lats, lats, side="left") - 1, 0, len(self._lats) - 1
        )
        prefix = f"{int(self.dist_km):04d}km"
        codes = []
        for r, lon in zip(row_index.tolist(), lons.tolist(), strict=True):
            row = self._row(r)
            c = int(np.searchsorted(row.lons, lon, side="left")) - 1
            if c < 0:
                c = row.lons.size - 1
            codes.append(f"{prefix}{self.sep}{self._row_labels[r]}{self.sep}{row.label(c)}")
        return codes

    def cell(self, lat: float, lon: float) -> str:
        """Code of the cell containing one point."""
        return self.cells(np.array([lat]), np.array([lon]))[0]

    def get_schema(self) -> dict[str, pa.DataType]:
        return {"majortom:code": pa.string()}

    def get_field_descriptions(self) -> dict[str, str]:
        return {
            "majortom:code": f"MajorTOM grid cell (~{self.dist_km:g} km) of the sample centroid."
        }

    def _compute(self, tortilla: Tortilla) -> pa.Table:
        columns = tortilla.column_types
        name = next((c for c in _CENTROIDS if c in columns), None)
        if name is None:
            raise TacoSchemaError(
                f"MajorTOM: needs a 'stac:centroid' or 'istac:centroid' column; the tortilla has "
                f"{list(columns)} (extend the samples with STAC or ISTAC first)"
            )
        wkb = tortilla.column(name)
        valid = pa.compute.is_valid(wkb).to_numpy(zero_copy_only=False)
        points = shapely.from_wkb(np.asarray(wkb.drop_null().to_pylist(), dtype=object))
        codes: list[str | None] = [None] * len(wkb)
        found = self.cells(shapely.get_y(points), shapely.get_x(points)) if len(points) else []
        for position, code in zip(np.flatnonzero(valid).tolist(), found, strict=True):
            codes[position] = code
        return pa.table({"majortom:code": pa.array(codes, pa.string())})
