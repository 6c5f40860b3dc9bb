"""STAC sample extension: CRS, shape, geotransform, times and centroid of a regular raster."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import pyarrow as pa

from taco_gdal.errors import TacoValidationError
from taco_gdal.extensions._geo import (
    Time,
    acquisition_times,
    lonlat_of,
    point_wkb,
    raster_facts,
)
from taco_gdal.extensions.base import SampleExtension

if TYPE_CHECKING:
    from taco_gdal.model.sample import Sample

__all__ = ["STAC", "raster_centroid"]

_TIME: Final = pa.timestamp("us")
_SCHEMA: Final = {
    "stac:crs": pa.string(),
    "stac:tensor_shape": pa.list_(pa.int64()),
    "stac:geotransform": pa.list_(pa.float64()),
    "stac:time_start": _TIME,
    "stac:centroid": pa.binary(),
    "stac:time_end": _TIME,
    "stac:time_middle": _TIME,
}
_DESCRIPTIONS: Final = {
    "stac:crs": "Coordinate reference system (EPSG code, WKT2 or PROJ string).",
    "stac:tensor_shape": "Raster dimensions [bands, height, width].",
    "stac:geotransform": "GDAL affine geotransform (6 numbers).",
    "stac:time_start": "Start of the acquisition (UTC).",
    "stac:centroid": "Centre of the raster in EPSG:4326 (WKB point).",
    "stac:time_end": "End of the acquisition (UTC).",
    "stac:time_middle": "Middle of the acquisition (UTC).",
}


def raster_centroid(
    crs: str, geotransform: Sequence[float], rows: int, cols: int, where: str = "STAC"
) -> bytes:
    """WKB point (EPSG:4326) of the centre of a ``rows`` x ``cols`` raster.

    Example:
        >>> import shapely
        >>> wkb = raster_centroid("EPSG:4326", (10, 0.1, 0, 50, 0, -0.1), 10, 20)
        >>> shapely.from_wkb(wkb).wkt
        'POINT (11 49.5)'
    """
    x0, dx_col, dx_row, y0, dy_col, dy_row = (float(v) for v in geotransform)
    x = x0 + dx_col * cols / 2 + dx_row * rows / 2
    y = y0 + dy_col * cols / 2 + dy_row * rows / 2
    return point_wkb(*lonlat_of(crs, x, y, where))


@dataclass(frozen=True)
class STAC(SampleExtension):
    """Spatio-temporal metadata of a regular raster (``stac:*`` fields).

    ``centroid`` defaults to the centre from ``geotransform`` and ``tensor_shape``,
    ``time_middle`` to the midpoint of start and end. Times are ``int``
    microseconds since 1970 (UTC) or ``datetime`` (naive means UTC).

    Example:
        >>> ext = STAC("EPSG:4326", (1, 10, 10), (0, 1, 0, 10, 0, -1), time_start=0)
        >>> ext.get_schema()["stac:tensor_shape"]
        ListType(list<item: int64>)
    """

    crs: str | None = None
    tensor_shape: Sequence[int] | None = None
    geotransform: Sequence[float] | None = None
    time_start: Time | None = None
    centroid: bytes | None = None
    time_end: Time | None = None
    time_middle: Time | None = None
    schema_only: bool = False

    def __post_init__(self) -> None:
        if self.schema_only:
            return
        if not isinstance(self.crs, str) or not self.crs:
            raise TacoValidationError(f"STAC.crs: expected a CRS string, found {self.crs!r}")
        shape = [int(v) for v in self.tensor_shape or ()]
        if len(shape) < 2 or any(v <= 0 for v in shape):
            raise TacoValidationError(
                f"STAC.tensor_shape: expected >= 2 positive sizes, found {self.tensor_shape!r}"
            )
        transform = [float(v) for v in self.geotransform or ()]
        if len(transform) != 6:
            raise TacoValidationError(
                f"STAC.geotransform: expected 6 numbers, found {self.geotransform!r}"
            )
        start, end, middle = acquisition_times(
            self.time_start, self.time_end, self.time_middle, "STAC"
        )
        centroid = self.centroid
        if centroid is None:
            centroid = raster_centroid(self.crs, transform, shape[-2], shape[-1])
        for name, value in (
            ("tensor_shape", tuple(shape)),
            ("geotransform", tuple(transform)),
            ("time_start", start),
            ("time_end", end),
            ("time_middle", middle),
            ("centroid", centroid),
        ):
            object.__setattr__(self, name, value)

    @classmethod
    def from_raster(
        cls,
        path: str | os.PathLike[str],
        time_start: Time | None = None,
        time_end: Time | None = None,
        time_middle: Time | None = None,
    ) -> STAC:
        """Read CRS, ``(bands, height, width)``, geotransform and time of a raster.

        Without ``time_start``, the raster's ``ACQUISITIONDATETIME`` then
        ``TIFFTAG_DATETIME`` tag gives it (naive times are UTC).

        Raises:
            TacoIOError: the raster cannot be opened.
            TacoValidationError: it has no CRS, or no time is given and none is tagged.

        Example:
            >>> from taco_gdal.model import Sample
            >>> ext = STAC.from_raster("scenes/scene0.tif")  # tagged 2024:01:15 10:00:00
            >>> ext.crs, ext.tensor_shape, ext.time_start
            ('EPSG:32630', (1, 8, 8), 1705312800000000)
            >>> Sample("t0", "scenes/scene0.tif").extend_with(ext)
            Sample(id='t0', type='FILE', fields=['stac:crs', 'stac:tensor_shape', ...])
        """
        facts = raster_facts(path, "STAC.from_raster")
        start = facts.start_time(time_start, "STAC.from_raster", "time_start")
        return cls(facts.crs, facts.shape, facts.geotransform, start, None, time_end, time_middle)

    def get_schema(self) -> dict[str, pa.DataType]:
        return dict(_SCHEMA)

    def get_field_descriptions(self) -> dict[str, str]:
        return dict(_DESCRIPTIONS)

    def _compute(self, sample: Sample) -> pa.Table:
        values = {name: [getattr(self, name.removeprefix("stac:"))] for name in _SCHEMA}
        return pa.table(values, schema=self.arrow_schema())
