"""A small static SVG map of footprints (lon/lat), for Jupyter's HTML repr.

No JavaScript, no tiles: plate carrée with x stretched by ``1 / cos(mid latitude)``,
a labelled graticule, then the footprints.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import shapely

__all__ = ["MapView", "footprint_svg", "map_view"]

_STEPS: Final = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 45, 90)
_MIN_SPAN: Final = 0.01
FILL: Final = "#1f77b4"
_FONT_SIZE: Final = 8
"""Graticule labels' font size in pixels: a baseline nearer the top is cut off."""
_LABEL_WIDTH: Final = 40
"""Room a longitude label needs right of its line."""
MIN_SHAPE: Final = 3.0
"""Smallest drawn footprint, in pixels: smaller ones become a square of this size."""


@dataclass(frozen=True, slots=True)
class MapView:
    """The lon/lat window a map shows: ``(west, south, east, north)``."""

    west: float
    south: float
    east: float
    north: float

    def x(self, lon: np.ndarray, width: float) -> np.ndarray:
        """Pixel x of longitudes."""
        return (lon - self.west) / (self.east - self.west) * width

    def y(self, lat: np.ndarray, height: float) -> np.ndarray:
        """Pixel y of latitudes (north up)."""
        return (self.north - lat) / (self.north - self.south) * height


def map_view(bounds: tuple[float, float, float, float] | None, width: int, height: int) -> MapView:
    """A window around ``bounds`` (5% margin) with the map's aspect ratio, inside the world."""
    if bounds is None or not all(math.isfinite(b) for b in bounds):
        return MapView(-180.0, -90.0, 180.0, 90.0)
    west, south, east, north = bounds
    cx, cy = (west + east) / 2, (south + north) / 2
    span_x = max(east - west, _MIN_SPAN) * 1.1
    span_y = max(north - south, _MIN_SPAN) * 1.1
    stretch = 1 / max(math.cos(math.radians(max(-80.0, min(80.0, cy)))), 0.2)
    # pixels per degree must match after the stretch: widen the narrower side
    if span_x / (span_y * stretch) < width / height:
        span_x = span_y * stretch * width / height
    else:
        span_y = span_x / stretch * height / width
    span_x, span_y = min(span_x, 360.0), min(span_y, 180.0)
    west = min(max(cx - span_x / 2, -180.0), 180.0 - span_x)
    south = min(max(cy - span_y / 2, -90.0), 90.0 - span_y)
    return MapView(west, south, west + span_x, south + span_y)


def _step(span: float) -> float:
    return next((s for s in _STEPS if span / s <= 6), 90.0)


def _label(value: float, step: float) -> str:
    decimals = max(0, -math.floor(math.log10(step))) if step < 1 else 0
    return f"{value:.{decimals}f}°"


def _graticule(view: MapView, width: int, height: int) -> list[str]:
    parts = []
    for axis, low, high in (("x", view.west, view.east), ("y", view.south, view.north)):
        step = _step(high - low)
        first = math.ceil(low / step) * step
        for value in np.arange(first, high + step / 2, step):
            if not low <= value <= high:
                continue
            if axis == "x":
                px = float(view.x(np.array(value), width))
                parts.append(f'<line x1="{px:.1f}" y1="0" x2="{px:.1f}" y2="{height}"/>')
                # near the right edge the label goes left of its line, not off the map
                anchor = ' text-anchor="end"' if px > width - _LABEL_WIDTH else ""
                at = px - 2 if anchor else px + 2
                parts.append(
                    f'<text x="{at:.1f}" y="{height - 3}"{anchor}>{_label(value, step)}</text>'
                )
            else:
                py = float(view.y(np.array(value), height))
                parts.append(f'<line x1="0" y1="{py:.1f}" x2="{width}" y2="{py:.1f}"/>')
                # above its line, unless that is off the top: then below it
                baseline = py - 2 if py - 2 >= _FONT_SIZE else py + _FONT_SIZE + 1
                parts.append(f'<text x="2" y="{baseline:.1f}">{_label(value, step)}</text>')
    return parts


def _pixels(geometry: Any, view: MapView, width: int, height: int) -> list[tuple[float, float]]:
    coords = shapely.get_coordinates(geometry)
    xs, ys = view.x(coords[:, 0], width), view.y(coords[:, 1], height)
    return list(zip(xs, ys, strict=True))


def _path(geometry: Any, view: MapView, width: int, height: int) -> str:
    return "M" + " ".join(f"{x:.1f},{y:.1f}" for x, y in _pixels(geometry, view, width, height))


def _shape(geometry: Any, view: MapView, width: int, height: int) -> str:
    if shapely.get_type_id(geometry) in (0, 4):  # Point, MultiPoint
        points = _pixels(geometry, view, width, height)
        return "".join(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5"/>' for x, y in points)
    pixels = np.asarray(_pixels(geometry, view, width, height), dtype=float).reshape(-1, 2)
    if pixels.size:
        (left, top), (right, bottom) = pixels.min(axis=0), pixels.max(axis=0)
        if right - left < MIN_SHAPE and bottom - top < MIN_SHAPE:
            # a tile far smaller than a pixel at this zoom: a visible square, not a dot
            x, y = (left + right - MIN_SHAPE) / 2, (top + bottom - MIN_SHAPE) / 2
            return f'<rect x="{x:.1f}" y="{y:.1f}" width="{MIN_SHAPE}" height="{MIN_SHAPE}"/>'
    rings = []
    for part in shapely.get_parts(geometry):
        if shapely.get_type_id(part) == 3:  # Polygon
            for ring in (part.exterior, *part.interiors):
                rings.append(_path(ring, view, width, height) + "Z")
        else:  # lines
            rings.append(_path(part, view, width, height))
    return f'<path fill-rule="evenodd" d="{"".join(rings)}"/>' if rings else ""


def footprint_svg(
    geometries: Sequence[Any] | np.ndarray,
    *,
    width: int = 320,
    height: int = 200,
    max_shapes: int = 2000,
    caption: str | None = None,
) -> str:
    """An SVG map of EPSG:4326 shapely geometries (``None`` skipped, at most ``max_shapes``)."""
    shapes = np.asarray([g for g in geometries if g is not None and not g.is_empty], dtype=object)
    bounds = None
    if shapes.size:
        b = shapely.total_bounds(shapes)
        bounds = (float(b[0]), float(b[1]), float(b[2]), float(b[3]))
    view = map_view(bounds, width, height)
    drawn = shapes
    if shapes.size > max_shapes:
        drawn = shapes[np.linspace(0, shapes.size - 1, max_shapes).astype(int)]
    text = caption if caption is not None else f"{shapes.size} footprints"
    if drawn.size < shapes.size:
        text += f" ({drawn.size} drawn)"
    body = "".join(_shape(g, view, width, height) for g in drawn)
    grid = "".join(_graticule(view, width, height))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="taco-map" width="{width}" '
        f'height="{height + 16}" viewBox="0 0 {width} {height + 16}" role="img">'
        f"<title>{html.escape(text)}</title>"
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#f4f7fb" stroke="#888"/>'
        f'<g stroke="#c8d0da" stroke-width="0.6" font-size="{_FONT_SIZE}" fill="#667" '
        f'font-family="sans-serif">{grid}</g>'
        f'<g fill="{FILL}" fill-opacity="0.35" stroke="{FILL}" stroke-width="1">{body}</g>'
        f'<text x="2" y="{height + 12}" font-size="10" font-family="sans-serif" '
        f'fill="#333">{html.escape(text)}</text></svg>'
    )
