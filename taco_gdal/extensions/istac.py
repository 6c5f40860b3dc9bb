"""ISTAC sample extension: footprint, times and centroid of irregular data (swaths, vectors)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import pyarrow as pa
import shapely

from taco_gdal.errors import TacoValidationError
from taco_gdal.extensions._geo import (
    Time,
    acquisition_times,
    lonlat_of,
    point_wkb,
    raster_facts,
    raster_footprint,
)
from taco_gdal.extensions.base import SampleExtension

if TYPE_CHECKING:
    from taco_gdal.model.sample import Sample

__all__ = ["ISTAC", "geometry_centroid"]

_TIME: Final = pa.timestamp("us")
_SCHEMA: Final = {
    "istac:crs": pa.string(),
    "istac:geometry": pa.binary(),
    "istac:time_start": _TIME,
    "istac:time_end": _TIME,
    "istac:time_middle": _TIME,
    "istac:centroid": pa.binary(),
}
_COMPUTED: Final = ("time_start", "time_end", "time_middle", "centroid")
_DESCRIPTIONS: Final = {
    "istac:crs": "Coordinate reference system of istac:geometry.",
    "istac:geometry": "Footprint in the source CRS (WKB).",
    "istac:time_start": "Start of the acquisition (UTC).",
    "istac:time_end": "End of the acquisition (UTC).",
    "istac:time_middle": "Middle of the acquisition (UTC).",
    "istac:centroid": "Centroid of the footprint in EPSG:4326 (WKB point).",
}


def geometry_centroid(crs: str, geometry: bytes, where: str = "ISTAC") -> bytes:
    """WKB point (EPSG:4326) of the centroid of a WKB geometry given in ``crs``.

    Example:
        >>> import shapely
        >>> square = shapely.to_wkb(shapely.box(0, 0, 2, 2))
        >>> shapely.from_wkb(geometry_centroid("EPSG:4326", square)).wkt
        'POINT (1 1)'
    """
    try:
        geom = shapely.from_wkb(geometry)
    except (shapely.errors.GEOSException, TypeError, ValueError) as exc:
        raise TacoValidationError(f"{where}: geometry is not valid WKB: {exc}") from exc
    if geom is None or geom.is_empty:
        raise TacoValidationError(f"{where}: geometry is empty")
    center = geom.centroid
    return point_wkb(*lonlat_of(crs, center.x, center.y, where))


@dataclass(frozen=True)
class ISTAC(SampleExtension):
    """Spatio-temporal metadata of irregular data (``istac:*`` fields).

    ``geometry`` is WKB in ``crs``; ``centroid`` (EPSG:4326) is computed from it
    when not given; ``time_middle`` defaults to the midpoint of start and end.

    Example:
        >>> import shapely
        >>> ext = ISTAC("EPSG:4326", shapely.to_wkb(shapely.box(0, 0, 1, 1)), time_start=0)
        >>> list(ext.get_schema())[:2]
        ['istac:crs', 'istac:geometry']
    """

    crs: str | None = None
    geometry: bytes | None = None
    time_start: Time | None = None
    time_end: Time | None = None
    time_middle: Time | None = None
    centroid: bytes | None = None
    schema_only: bool = False

    def __post_init__(self) -> None:
        if self.schema_only:
            return
        if not isinstance(self.crs, str) or not self.crs:
            raise TacoValidationError(f"ISTAC.crs: expected a CRS string, found {self.crs!r}")
        if not isinstance(self.geometry, bytes):
            raise TacoValidationError(
                f"ISTAC.geometry: expected WKB bytes, found {type(self.geometry).__name__}"
            )
        start, end, middle = acquisition_times(
            self.time_start, self.time_end, self.time_middle, "ISTAC"
        )
        centroid = self.centroid or geometry_centroid(self.crs, self.geometry)
        for name, value in zip(_COMPUTED, (start, end, middle, centroid), strict=True):
            object.__setattr__(self, name, value)

    @classmethod
    def from_raster(
        cls,
        path: str | os.PathLike[str],
        time: Time | None = None,
        time_end: Time | None = None,
    ) -> ISTAC:
        """Footprint (four corners, in the raster's CRS), CRS, centroid and time of a raster.

        The time defaults to the raster's tags, as in :meth:`STAC.from_raster`.

        Raises:
            TacoIOError: the raster cannot be opened.
            TacoValidationError: it has no CRS, or no time is given and none is tagged.

        Example:
            >>> from taco_gdal.model import Sample
            >>> ext = ISTAC.from_raster("scenes/scene0.tif")  # tagged 2024:01:15 10:00:00
            >>> ext.crs, ext.time_start  # microseconds since 1970, UTC
            ('EPSG:32630', 1705312800000000)
            >>> Sample("t0", "scenes/scene0.tif").extend_with(ext)
            Sample(id='t0', type='FILE', fields=['istac:crs', 'istac:geometry', ...])
        """
        facts = raster_facts(path, "ISTAC.from_raster")
        start = facts.start_time(time, "ISTAC.from_raster", "time")
        footprint = raster_footprint(facts.geotransform, facts.shape[1], facts.shape[2])
        return cls(facts.crs, footprint, start, time_end)

    def get_schema(self) -> dict[str, pa.DataType]:
        return dict(_SCHEMA)

    def get_field_descriptions(self) -> dict[str, str]:
        return dict(_DESCRIPTIONS)

    def _compute(self, sample: Sample) -> pa.Table:
        values = {name: [getattr(self, name.removeprefix("istac:"))] for name in _SCHEMA}
        return pa.table(values, schema=self.arrow_schema())
