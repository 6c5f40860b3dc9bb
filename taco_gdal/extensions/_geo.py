"""Small geodesy helpers of the STAC-like extensions: CRS transforms, WKB points, times."""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

import shapely
from pyproj import CRS, Transformer
from pyproj.exceptions import CRSError

from taco_gdal.errors import TacoIOError, TacoValidationError

if TYPE_CHECKING:
    from rasterio.io import DatasetReader

__all__ = [
    "RasterFacts",
    "Time",
    "acquisition_times",
    "lonlat_of",
    "parse_tag_time",
    "point_wkb",
    "raster_footprint",
    "raster_time",
    "to_microseconds",
    "wgs84_transformer",
]

_local = threading.local()  # pyproj transformers are not thread-safe: one cache per thread


def wgs84_transformer(crs: str) -> Transformer:
    """A cached ``crs`` -> EPSG:4326 transformer (lon, lat), one per thread.

    Raises TacoValidationError when pyproj cannot interpret ``crs``.
    """
    cache: dict[str, Transformer] = _local.__dict__.setdefault("transformers", {})
    transformer = cache.get(crs)
    if transformer is None:
        try:
            source = CRS.from_user_input(crs)
        except CRSError as exc:
            raise TacoValidationError(f"crs: cannot interpret {crs!r}: {exc}") from exc
        transformer = Transformer.from_crs(source, CRS.from_epsg(4326), always_xy=True)
        cache[crs] = transformer
    return transformer


def lonlat_of(crs: str, x: float, y: float, where: str) -> tuple[float, float]:
    """``(lon, lat)`` in EPSG:4326 of point ``(x, y)`` in ``crs``; raises if not finite/in range."""
    lon, lat = wgs84_transformer(crs).transform(x, y)
    if not (math.isfinite(lon) and math.isfinite(lat)):
        raise TacoValidationError(
            f"{where}: centroid ({x}, {y}) in {crs} has no finite WGS84 position ({lon}, {lat})"
        )
    if not (-180 <= lon <= 180 and -90 <= lat <= 90):
        raise TacoValidationError(f"{where}: centroid ({lon}, {lat}) is outside WGS84 bounds")
    return float(lon), float(lat)


def point_wkb(lon: float, lat: float) -> bytes:
    """2D little-endian WKB of a point (21 bytes), as shapely writes it."""
    return bytes(shapely.to_wkb(shapely.points(lon, lat)))


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

Time = int | datetime
"""An instant: ``int`` microseconds since 1970-01-01 UTC, or a ``datetime`` (naive = UTC)."""


def to_microseconds(value: Any, name: str) -> int | None:
    """``int`` microseconds since the Unix epoch from an int or a datetime (naive = UTC)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise TacoValidationError(
            f"{name}: expected int microseconds or a datetime, found {value!r}"
        )
    if isinstance(value, int):
        return value
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
        return (moment - _EPOCH) // timedelta(microseconds=1)
    raise TacoValidationError(
        f"{name}: expected int microseconds since 1970-01-01 UTC or a datetime, found "
        f"{type(value).__name__} {value!r}"
    )


def acquisition_times(
    start: Any, end: Any, middle: Any, owner: str
) -> tuple[int, int | None, int | None]:
    """``(time_start, time_end, time_middle)`` of an extension, in microseconds.

    ``time_middle`` defaults to the midpoint when start and end are given. Raises
    TacoValidationError (naming ``owner``) for no start, start after end, or a bad type.
    """
    first = to_microseconds(start, f"{owner}.time_start")
    if first is None:
        raise TacoValidationError(f"{owner}.time_start: required, found None")
    last = to_microseconds(end, f"{owner}.time_end")
    if last is not None and last < first:
        raise TacoValidationError(f"{owner}: time_start {first} is after time_end {last}")
    mid = to_microseconds(middle, f"{owner}.time_middle")
    if mid is None and last is not None:
        mid = (first + last) // 2
    return first, last, mid


TIME_TAGS: Final = (
    ("IMAGERY", "ACQUISITIONDATETIME"),
    ("IMD", "ACQUISITIONDATETIME"),
    ("", "TIFFTAG_DATETIME"),
)
"""``(domain, key)`` pairs ``raster_time`` reads, in order: ``TIFFTAG_DATETIME`` (when the
file was made) only when no acquisition time is tagged."""
TIME_TAG_NAMES: Final = " / ".join(
    f"{domain}:{key}" if domain else key for domain, key in TIME_TAGS
)
"""The time tags as an error message names them (domain:key)."""


def parse_tag_time(text: str, where: str) -> datetime:
    """A UTC datetime from a TIFF (``YYYY:MM:DD HH:MM:SS``) or ISO 8601 date tag.

    Raises TacoValidationError naming ``where`` for anything else.
    """
    value = text.strip().strip('"')
    if len(value) >= 10 and value[4] == ":" and value[7] == ":":
        value = f"{value[:4]}-{value[5:7]}-{value[8:]}"
    try:
        moment = datetime.fromisoformat(value)
    except ValueError as exc:
        raise TacoValidationError(
            f"{where}: expected a date like '2024:03:15 10:30:00' or '2024-03-15T10:30:00Z', "
            f"found {text!r}"
        ) from exc
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment


def raster_time(src: DatasetReader, where: str) -> datetime | None:
    """The acquisition time in a raster's first present :data:`TIME_TAGS` tag, or None."""
    for domain, key in TIME_TAGS:
        try:
            tags = src.tags(ns=domain) if domain else src.tags()
        except (KeyError, ValueError):  # pragma: no cover - an unknown domain is empty
            continue
        value = tags.get(key)
        if value:
            return parse_tag_time(str(value), f"{where} {domain or 'default'}:{key}")
    return None


def raster_footprint(transform: Sequence[float], rows: int, cols: int) -> bytes:
    """WKB polygon of a raster's four corners in its own CRS, from a GDAL geotransform."""
    x0, dx_col, dx_row, y0, dy_col, dy_row = (float(v) for v in transform)
    corners = [(0, 0), (cols, 0), (cols, rows), (0, rows), (0, 0)]
    ring = [(x0 + dx_col * c + dx_row * r, y0 + dy_col * c + dy_row * r) for c, r in corners]
    polygon = shapely.geometry.polygon.orient(shapely.Polygon(ring))  # exterior counter-clockwise
    return bytes(shapely.to_wkb(polygon))


@dataclass(frozen=True, slots=True)
class RasterFacts:
    """What the STAC and ISTAC extensions read from a raster file."""

    path: str
    crs: str
    shape: tuple[int, int, int]
    """``(bands, height, width)``."""
    geotransform: tuple[float, float, float, float, float, float]
    time: datetime | None
    """Acquisition time from the raster's tags (:data:`TIME_TAGS`), or None."""
    data_type: str = "uint8"
    """rasterio's name of band 1's pixel type."""
    nodata: float | None = None
    """Band 1's nodata value, or None."""

    def start_time(self, given: Time | None, owner: str, argument: str) -> Time:
        """``given`` if set, else the tagged time (TacoValidationError naming ``argument``)."""
        if given is not None:
            return given
        if self.time is None:
            raise TacoValidationError(
                f"{owner}: expected a time: pass {argument}= or tag the raster with "
                f"{TIME_TAG_NAMES}; found none in {self.path!r}"
            )
        return self.time


def raster_facts(path: str | os.PathLike[str], owner: str) -> RasterFacts:
    """CRS, shape, geotransform, tagged time, band 1's type and nodata of a raster (rasterio).

    Raises:
        TacoIOError: the raster cannot be opened (``owner`` names the caller).
        TacoValidationError: it has no CRS, or a date tag that is not a date.
    """
    from rasterio.errors import RasterioIOError

    from taco_gdal.format.vsi import to_vsi
    from taco_gdal.io.sample import open_raster

    gdal_path = to_vsi(path)
    try:
        with open_raster(gdal_path) as src:
            crs = src.crs
            shape = (int(src.count), int(src.height), int(src.width))
            gt = tuple(float(v) for v in src.transform.to_gdal())
            time = raster_time(src, f"{owner}: {gdal_path!r}")
            data_type, nodata = str(src.dtypes[0]), src.nodata
    except (RasterioIOError, TacoIOError) as exc:
        raise TacoIOError(f"{owner}: cannot open {gdal_path!r}: {exc}") from exc
    if crs is None:
        raise TacoValidationError(
            f"{owner}: {gdal_path!r} has no CRS; expected a georeferenced raster"
        )
    transform: Any = gt  # six numbers: to_gdal() always gives six
    return RasterFacts(gdal_path, crs.to_string(), shape, transform, time, data_type, nodata)
