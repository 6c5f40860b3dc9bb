"""What an analyst sees in Jupyter: summaries, the footprint map, plots, quick-looks.

Only :func:`plot_sample` reads pixels; the rest uses metadata ``load`` already holds.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pandas as pd

from taco_gdal.errors import TacoError, TacoNavigationError, TacoQueryError
from taco_gdal.format.names import CURRENT_ID, ID, TIME_START_COLUMNS
from taco_gdal.read._types import is_binary
from taco_gdal.read.notebook._svg import footprint_svg
from taco_gdal.read.query.sql import VISIBLE_INTERNAL, descendants_sql, quote_ident

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from taco_gdal.read.frames.dataframe import TacoDataFrame
    from taco_gdal.read.query.state import QueryState

__all__ = [
    "Summary",
    "explore",
    "frame_html",
    "plot_footprints",
    "plot_sample",
    "rounded_extent",
    "summarise",
]

_STRETCH: Final = (2.0, 98.0)
_QUICKLOOK_PIXELS: Final = 512


def _decimals(span: float) -> int:
    if span <= 0 or not math.isfinite(span):
        return 4
    return max(0, min(6, 2 - math.floor(math.log10(span))))


def rounded_extent(bounds: Sequence[float]) -> tuple[float, float, float, float]:
    """Bounds rounded to what their size warrants (3 significant digits of the span).

    Example:
        >>> rounded_extent((-4.180034, 40.2851, -1.80001, 41.39999))
        (-4.18, 40.29, -1.8, 41.4)
    """
    west, south, east, north = (float(v) for v in bounds)
    digits = _decimals(max(east - west, north - south))
    return (round(west, digits), round(south, digits), round(east, digits), round(north, digits))


@dataclass(frozen=True)
class Summary:
    """Facts an HTML repr shows, computed from the current (filtered) view."""

    rows: tuple[int, ...]
    extent: tuple[float, float, float, float] | None
    """Rounded EPSG:4326 bounds of the footprints shown on the map."""
    time: tuple[str, str] | None
    """First and last start time of the current level-0 rows."""
    svg: str | None


def _time_range(state: QueryState, fetch: Any, columns: Sequence[str]) -> tuple[str, str] | None:
    column = next((c for c in TIME_START_COLUMNS if c in columns), None)
    if column is None:
        return None
    col = quote_ident(column)
    # DuckDB formats the values: years past 9999 have no Python datetime.
    row = fetch(
        f"SELECT CAST(min({col}) AS VARCHAR) AS lo, CAST(max({col}) AS VARCHAR) AS hi "
        f"FROM {quote_ident(state.view)}"
    ).to_pylist()[0]
    if row["lo"] is None:
        return None
    return str(row["lo"])[:19], str(row["hi"])[:19]


def summarise(state: QueryState, fetch: Any, columns_of: Any, *, map_width: int = 320) -> Summary:
    """Rows per level, extent, time range and the SVG map of the current view.

    ``fetch(sql)`` runs a query in the dataset's session; ``columns_of`` lists a relation's.
    """
    from taco_gdal.read.spatial.crs import footprint_column
    from taco_gdal.read.spatial.filters import footprints_of

    rows = []
    shapes: np.ndarray | None = None
    for level in range(state.max_depth + 1):
        try:
            sql = descendants_sql(state, level, columns_of)
        except TacoQueryError:
            break
        count = fetch(f"SELECT count(*) AS n FROM ({sql})").column("n")[0].as_py()
        rows.append(int(count))
        table = state.base.table(level)
        column = footprint_column(table)
        if (
            shapes is None
            and column is not None
            and CURRENT_ID in columns_of(state.relation(level))
        ):
            ids = fetch(f"SELECT {quote_ident(CURRENT_ID)} AS i FROM ({sql})").column("i")
            positions = np.asarray(ids.to_numpy(zero_copy_only=False), dtype=np.int64)
            shapes = footprints_of(state, level, column).take(positions)
    extent = None
    svg = None
    if shapes is not None:
        present = [g for g in shapes if g is not None]
        if present:
            import shapely

            extent = rounded_extent(shapely.total_bounds(np.asarray(present, dtype=object)))
        svg = footprint_svg(shapes, width=map_width, height=map_width * 5 // 8)
    time = _time_range(state, fetch, columns_of(state.view))
    return Summary(tuple(rows), extent, time, svg)


def _readable_table(frame: TacoDataFrame) -> tuple[str | None, list[str]]:
    """pandas' HTML of ``frame`` (None: unchanged) with WKB shortened, and the hidden columns."""
    hidden = [
        str(c)
        for c in frame.columns
        if str(c).startswith("internal:") and str(c) not in VISIBLE_INTERNAL
    ]
    binary = [c for c in frame.columns if _holds_bytes(frame[c])]
    if not binary and not hidden:
        return None, []
    shown = pd.DataFrame(frame).drop(columns=hidden)
    # Formatters touch only the rows pandas displays (a frame may have millions).
    rendered: str | None = shown.to_html(
        formatters={column: _wkb_text for column in binary},
        max_rows=_rows_shown(len(shown)),
        max_cols=pd.get_option("display.max_columns"),
        show_dimensions=pd.get_option("display.show_dimensions"),
        notebook=True,
    )
    return rendered, hidden


def _rows_shown(rows: int) -> int | None:
    """pandas' rule: all rows up to ``display.max_rows``, else ``display.min_rows``."""
    most: int | None = pd.get_option("display.max_rows")
    least: int | None = pd.get_option("display.min_rows")
    if most is None or rows <= most:
        return most
    return least or most


def _holds_bytes(column: pd.Series) -> bool:
    """True for WKB-like columns: Arrow binary, or Python objects that are bytes."""
    dtype = column.dtype
    if isinstance(dtype, pd.ArrowDtype):
        return is_binary(dtype.pyarrow_dtype)
    return bool(dtype == np.dtype(object)) and any(isinstance(v, bytes) for v in column.head(20))


def _wkb_text(value: object) -> str:
    return f"<WKB {len(value)} B>" if isinstance(value, bytes) else str(value)


def frame_html(frame: TacoDataFrame, table_html: str) -> str:
    """A frame's HTML: its footprint map (if it has geometry) beside a readable table."""
    import geopandas as gpd

    readable, hidden = _readable_table(frame)
    table_html = readable or table_html
    context = frame._taco
    level = "" if context is None else f"level {context.level} of {html.escape(context.where)}, "
    note = f"; not shown: {html.escape(', '.join(hidden))}" if hidden else ""
    head = f"<div><b>TacoDataFrame</b> ({level}{len(frame)} rows{note})</div>"
    if isinstance(frame, gpd.GeoDataFrame) and frame._geometry_column_name in frame.columns:
        svg = _frame_map(frame)
        return (
            f'<div class="taco-df">{head}<div style="display:flex;gap:12px;align-items:'
            f'flex-start"><div>{svg}</div><div style="overflow:auto">{table_html}</div></div>'
            "</div>"
        )
    return f'<div class="taco-df">{head}{table_html}</div>'


_MAP_SHAPES: Final = 2000


def _frame_map(frame: TacoDataFrame) -> str:
    """The frame's footprint map (an even sample when they are many and not computed yet)."""
    from taco_gdal.read.spatial._lazygeom import LazyGeometryArray

    values = frame.geometry.values
    if isinstance(values, LazyGeometryArray) and not values.computed and len(values) > _MAP_SHAPES:
        picked = np.linspace(0, len(values) - 1, _MAP_SHAPES).astype(np.int64)
        sample = np.asarray(values.take(picked), dtype=object)
        present = sum(1 for g in sample if g is not None)
        caption = f"{len(values)} rows, {present} of an even sample drawn"
        return footprint_svg(sample, max_shapes=_MAP_SHAPES, caption=caption)
    return footprint_svg(np.asarray(frame.geometry.to_numpy(), dtype=object))


def plot_footprints(
    frame: TacoDataFrame, column: str | None, ax: Axes | None, **kwargs: Any
) -> Axes:
    """Footprints (EPSG:4326) on lon/lat axes, coloured by ``column`` when given.

    Raises:
        TacoQueryError: the frame has no geometry, or no such column.
    """
    _require_footprints(frame, "plot")
    if column is not None and column not in frame.columns:
        raise TacoQueryError(
            f"plot(column={column!r}): no such column; the view has {list(frame.columns)}"
        )
    if column is not None and str(frame[column].dtype).startswith("datetime64"):
        frame = frame.assign(**{column: frame[column].dt.strftime("%Y-%m-%d")})  # a legend
    options: dict[str, Any] = {"alpha": 0.6, "edgecolor": "black", "linewidth": 0.5}
    if column is not None:
        options["legend"] = True
        if not pd.api.types.is_numeric_dtype(frame[column]):
            if ax is None:
                # categories: a legend right of the map, inside a figure whose constrained
                # layout makes room for it, so a default savefig() keeps it whole
                import matplotlib.pyplot as plt

                _, ax = plt.subplots(layout="constrained")
                options["legend_kwds"] = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0)}
            else:  # the caller's figure: the legend stays inside the axes
                options["legend_kwds"] = {"loc": "best"}
    options.update(kwargs)
    axes: Axes = frame.plot(column=column, ax=ax, **options)
    axes.set_xlabel("longitude (°)")
    axes.set_ylabel("latitude (°)")
    axes.grid(True, linewidth=0.3)
    return axes


def _require_footprints(frame: TacoDataFrame, call: str) -> None:
    import geopandas as gpd

    if not isinstance(frame, gpd.GeoDataFrame) or frame.active_geometry_name is None:
        raise TacoQueryError(
            f"{call}(): expected footprints (istac:geometry, stac:centroid or istac:centroid); "
            f"the current view has columns {list(frame.columns)}"
        )


def _stretch(band: np.ma.MaskedArray[Any, Any]) -> np.ndarray:
    valid = band.compressed().astype(np.float64)
    out = np.zeros(band.shape, dtype=np.float64)
    if valid.size == 0:
        return out
    low, high = np.percentile(valid, _STRETCH)
    scale = high - low if high > low else 1.0
    stretched: np.ndarray = np.clip((band.filled(low).astype(np.float64) - low) / scale, 0, 1)
    return stretched


def _title(frame: TacoDataFrame, position: int) -> str:
    row = frame.iloc[position]
    parts = [str(row[ID])] if ID in frame.columns else [f"sample {position}"]
    for column in TIME_START_COLUMNS:
        if column in frame.columns and row[column] is not None:
            parts.append(str(row[column])[:19])
            break
    return "  ".join(parts)


def plot_sample(
    frame: TacoDataFrame,
    key: int | str,
    position: int,
    target: str | TacoDataFrame,
    bands: Sequence[int] | None = None,
    ax: Axes | None = None,
) -> Axes:
    """A quick-look of one FILE sample: up to 3 bands, 2-98 percent stretch, id and date.

    ``position`` is row ``key`` of ``frame``, ``target`` what ``frame.read`` gave for it.

    Raises:
        TacoNavigationError: no such sample, or it is a FOLDER.
    """
    import matplotlib.pyplot as plt

    from taco_gdal.io.sample import open_sample

    if not isinstance(target, str):
        raise TacoNavigationError(
            f"plot_sample({key!r}): expected a FILE sample, found a FOLDER; plot one of its "
            f"children: frame.read({key!r}).plot_sample(0)"
        )
    with open_sample(target) as src:
        chosen = list(bands) if bands is not None else list(range(1, min(src.count, 3) + 1))
        scale = max(src.height, src.width) / _QUICKLOOK_PIXELS
        shape = (
            len(chosen),
            max(1, int(src.height / max(scale, 1))),
            max(1, int(src.width / max(scale, 1))),
        )
        pixels = src.read(chosen, out_shape=shape, masked=True)
    layers = [_stretch(pixels[i]) for i in range(pixels.shape[0])]
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 5))
    assert ax is not None
    if len(layers) == 3:
        ax.imshow(np.dstack(layers))
    else:
        ax.imshow(layers[0], cmap="gray")
    ax.set_title(_title(frame, position))
    ax.set_axis_off()
    return ax


def _json_columns(frame: TacoDataFrame) -> list[str]:
    """Columns a GeoJSON popup can show: text, numbers, times (not WKB bytes or lists)."""
    keep = []
    for name in frame.columns:
        series = frame[name]
        if str(series.dtype) == "geometry":
            continue
        plain = pd.api.types.is_numeric_dtype(series) or pd.api.types.is_datetime64_any_dtype(
            series
        )
        text = pd.api.types.is_string_dtype(series) and all(
            isinstance(v, str) or v is None for v in series.head(20)
        )
        if plain or text:
            keep.append(str(name))
    return keep


def explore(frame: TacoDataFrame, **kwargs: Any) -> Any:
    """An interactive folium map of the footprints (EPSG:4326), when folium is installed.

    Text, number and time columns become the tooltip; ``kwargs`` go to ``folium.Map``.
    Needs only folium (geopandas' ``explore`` also needs mapclassify).

    Raises:
        TacoError: folium is not installed (the message says how to get it).
    """
    import importlib.util

    import geopandas as gpd

    if importlib.util.find_spec("folium") is None:
        raise TacoError(
            "explore() draws an interactive map with folium: expected the folium package, "
            "found none installed (pip install folium); ds.plot() and the HTML repr's map "
            "need nothing more"
        )
    import folium

    _require_footprints(frame, "explore")
    fields = _json_columns(frame)
    shown = gpd.GeoDataFrame(frame[fields], geometry=frame.geometry, crs=frame.crs)
    for name in fields:
        if pd.api.types.is_datetime64_any_dtype(shown[name]):
            shown[name] = shown[name].astype(str)
    west, south, east, north = (float(v) for v in frame.total_bounds)
    folium_map = folium.Map(**kwargs)
    tooltip = folium.GeoJsonTooltip(fields=fields[:8]) if fields else None
    folium.GeoJson(shown.to_json(), name="footprints", tooltip=tooltip).add_to(folium_map)
    folium_map.fit_bounds([[south, west], [north, east]])
    return folium_map
