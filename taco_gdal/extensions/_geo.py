"""Small geodesy helpers of the STAC-like extensions: CRS transforms, WKB points, times."""

from __future__ import annotations

import math
import threading
from datetime import UTC, datetime
from typing import Any

import shapely
from pyproj import CRS, Transformer
from pyproj.exceptions import CRSError

from taco_gdal.errors import TacoValidationError

__all__ = ["Time", "acquisition_times", "lonlat_of", "point_wkb", "to_microseconds"]

_local = threading.local()  # pyproj transformers are not thread-safe: one cache per thread


def _to_wgs84(crs: str) -> Transformer:
    cache: dict[str, Transformer] | None = getattr(_local, "transformers", None)
    if cache is None:
        cache = {}
        _local.transformers = cache
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
    lon, lat = _to_wgs84(crs).transform(x, y)
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
        delta = moment - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    raise TacoValidationError(
        f"{name}: expected int microseconds since 1970-01-01 UTC or a datetime, found "
        f"{type(value).__name__} {value!r}"
    )


def acquisition_times(
    start: Any, end: Any, middle: Any, owner: str
) -> tuple[int, int | None, int | None]:
    """``(time_start, time_end, time_middle)`` of an extension, in microseconds.

    ``time_start`` is required and must not come after ``time_end``;
    ``time_middle`` defaults to the midpoint of start and end when both are given.

    Raises:
        TacoValidationError: no start, start after end, or a value that is
            neither an int nor a datetime; ``owner`` (``STAC``, ``ISTAC``) names it.

    Example:
        >>> acquisition_times(0, 10, None, "STAC")
        (0, 10, 5)
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
