"""``filter_bbox`` and ``filter_datetime``: STAC-style filters as lazy views.

At level 0 a filter is a ``WHERE`` on the current view.  At level ``k > 0``
it filters the level-``k`` view, then keeps, level by level up to level 0, the
rows with at least one surviving child (``child.internal:parent_id =
parent.internal:current_id``, and equal ``internal:source_file`` when both
sides have it).  Every per-level view is remembered, so a later filter at any
level compounds with it and ``read()`` returns only surviving children.

Values are bound as DuckDB variables (``SET VARIABLE ... = ?``), never written
into SQL.  The spatial predicate is ``ST_Intersects(ST_GeomFromWKB(col),
ST_MakeEnvelope(...))``; for point columns the reader's decoded coordinates
(``__taco_x:col``) first discard the rows outside the box, so the exact
predicate only runs on candidates.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from taco_gdal.errors import TacoQueryError
from taco_gdal.format.names import CURRENT_ID, GEOMETRY_COLUMNS, SOURCE_FILE, TIME_START_COLUMNS
from taco_gdal.read._duck import ensure_spatial
from taco_gdal.read.levels import point_columns
from taco_gdal.read.query import filtered_view_sql, is_hidden, quote_ident, survivors_view_sql
from taco_gdal.read.timerange import parse_range

if TYPE_CHECKING:
    from taco_gdal.read.dataset import TacoDataset

__all__ = ["filter_bbox", "filter_datetime"]

_GEOMETRY_TYPES = ("BLOB", "GEOMETRY")
_TIME_TYPES = ("TIMESTAMP", "DATE")


def _relation(ds: TacoDataset, level: object) -> tuple[int, str]:
    if isinstance(level, bool) or not isinstance(level, int):
        raise TacoQueryError(f"level must be an int, got {type(level).__name__} {level!r}")
    if not 0 <= level <= ds.max_depth:
        raise TacoQueryError(f"level must be 0..{ds.max_depth} for {ds.path}, got {level}")
    if level == 0:
        return 0, ds._view
    return level, ds._level_views.get(level, f"level{level}")


def _resolve(
    ds: TacoDataset,
    relation: str,
    level: int,
    requested: str,
    candidates: tuple[str, ...],
    kinds: tuple[str, ...],
    what: str,
) -> tuple[str, str]:
    columns = dict(ds._session.columns(relation))
    visible = [c for c in columns if not is_hidden(c)]
    if requested == "auto":
        found = next((c for c in candidates if c in columns), None)
        if found is None:
            raise TacoQueryError(
                f"{ds.path}: no {what} column at level {level}: looked for {list(candidates)}; "
                f"the level has columns {visible}"
            )
        requested = found
    elif requested not in columns:
        raise TacoQueryError(
            f"{ds.path}: {what} column {requested!r} not found at level {level}; the level has "
            f"columns {visible}"
        )
    kind = columns[requested]
    if not kind.startswith(kinds):
        raise TacoQueryError(
            f"{ds.path}: {what} column {requested!r} at level {level} has type {kind}, expected "
            f"one of {list(kinds)}"
        )
    return requested, kind


def _apply(ds: TacoDataset, level: int, view: str, predicate: str, step: str) -> TacoDataset:
    session = ds._session
    if level == 0:
        session.execute(filtered_view_sql(view, ds._view, predicate), what=step)
        return ds._derive(view, step)
    if CURRENT_ID not in session.column_names(ds._view):
        raise TacoQueryError(
            f"{ds.path}: a filter at level {level} keeps level-0 samples by "
            f"{CURRENT_ID!r}, which the current view dropped (keep it in sql() queries)"
        )
    target = ds._level_views.get(level, f"level{level}")
    session.execute(filtered_view_sql(view, target, predicate), what=step)
    views = dict(ds._level_views)
    views[level] = view
    child = view
    for parent_level in range(level - 1, -1, -1):
        parents = ds._view if parent_level == 0 else views.get(parent_level, f"level{parent_level}")
        survivors = session.new_name("v")
        same_source = SOURCE_FILE in session.column_names(parents) and SOURCE_FILE in (
            session.column_names(child)
        )
        session.execute(
            survivors_view_sql(survivors, parents, child, match_source_file=same_source),
            what=step,
        )
        if parent_level > 0:
            views[parent_level] = survivors
        child = survivors
    return ds._derive(child, step, views)


def _box(box: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
    try:
        minx, miny, maxx, maxy = (float(v) for v in box)
    except (TypeError, ValueError) as exc:
        raise TacoQueryError(f"filter_bbox: bounds must be numbers, got {box!r}") from exc
    if not all(math.isfinite(v) for v in (minx, miny, maxx, maxy)) or miny > maxy:
        raise TacoQueryError(f"filter_bbox: expected finite bounds with miny <= maxy, got {box!r}")
    return minx, miny, maxx, maxy


def _bbox_predicate(geometry: str, helpers: tuple[str, str] | None, b: list[str]) -> str:
    """Exact test for ``minx <= maxx``; ``helpers`` (decoded x/y) discard rows cheaply first."""
    exact = f"ST_Intersects({geometry}, ST_MakeEnvelope({b[0]}, {b[1]}, {b[2]}, {b[3]}))"
    if helpers is None:
        return exact
    x, y = (quote_ident(h) for h in helpers)
    return f"{x} BETWEEN {b[0]} AND {b[2]} AND {y} BETWEEN {b[1]} AND {b[3]} AND {exact}"


def filter_bbox(
    ds: TacoDataset, box: tuple[float, float, float, float], geometry_col: str, level: int
) -> TacoDataset:
    """See :meth:`TacoDataset.filter_bbox`."""
    minx, miny, maxx, maxy = _box(box)
    level, relation = _relation(ds, level)
    column, kind = _resolve(
        ds, relation, level, geometry_col, GEOMETRY_COLUMNS, _GEOMETRY_TYPES, "geometry"
    )
    ensure_spatial()
    session = ds._session
    view = session.new_name("v")
    names = ("minx", "miny", "maxx", "maxy", "west_edge", "east_edge")
    values = (minx, miny, maxx, maxy, 180.0, -180.0)
    bound = {
        name: session.set_variable(f"{view}_{name}", value)
        for name, value in zip(names, values, strict=True)
    }
    geometry = (
        quote_ident(column) if kind == "GEOMETRY" else f"ST_GeomFromWKB({quote_ident(column)})"
    )
    x, y = point_columns(column)
    helpers = (x, y) if {x, y} <= set(session.column_names(relation)) else None
    lo, hi = bound["miny"], bound["maxy"]
    if minx <= maxx:
        predicate = _bbox_predicate(geometry, helpers, [bound["minx"], lo, bound["maxx"], hi])
    else:  # the box crosses the antimeridian: [minx, 180] and [-180, maxx]
        east = _bbox_predicate(geometry, helpers, [bound["minx"], lo, bound["west_edge"], hi])
        west = _bbox_predicate(geometry, helpers, [bound["east_edge"], lo, bound["maxx"], hi])
        predicate = f"(({east}) OR ({west}))"
    step = f"filter_bbox({minx}, {miny}, {maxx}, {maxy}, {column!r}, level={level})"
    return _apply(ds, level, view, predicate, step)


def _as_bound(value: datetime, aware: bool) -> datetime:
    """Naive UTC for TIMESTAMP columns, UTC-aware for TIMESTAMP WITH TIME ZONE."""
    return value.replace(tzinfo=UTC) if aware else value


def filter_datetime(ds: TacoDataset, value: Any, time_col: str, level: int) -> TacoDataset:
    """See :meth:`TacoDataset.filter_datetime`."""
    span = parse_range(value)
    level, relation = _relation(ds, level)
    column, kind = _resolve(ds, relation, level, time_col, TIME_START_COLUMNS, _TIME_TYPES, "time")
    session = ds._session
    view = session.new_name("v")
    target = quote_ident(column)
    if kind == "DATE":
        target = f"CAST({target} AS TIMESTAMP)"
    aware = "TIME ZONE" in kind
    clauses = []
    if span.start is not None:
        start = session.set_variable(f"{view}_start", _as_bound(span.start, aware))
        clauses.append(f"{target} >= {start}")
    if span.end is not None:
        end = session.set_variable(f"{view}_end", _as_bound(span.end, aware))
        clauses.append(f"{target} {'<=' if span.end_inclusive else '<'} {end}")
    step = f"filter_datetime({span.start} .. {span.end}, {column!r}, level={level})"
    return _apply(ds, level, view, " AND ".join(clauses), step)
