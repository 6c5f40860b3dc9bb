"""Filters as lazy views: ``filter_datetime``, and the cascade every filter shares.

At level ``k > 0`` a filter restricts the level-``k`` view, then keeps, level by level
up to 0, the rows with a surviving child; each per-level view is remembered, so
filters compound and ``read()`` shows survivors only.  Values are bound as DuckDB
variables; filters decided in Arrow or numpy enter as a ``RowSet``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from taco_gdal.errors import TacoQueryError
from taco_gdal.format.names import CURRENT_ID, SOURCE_FILE, TIME_START_COLUMNS
from taco_gdal.read.query import _duck
from taco_gdal.read.query.sql import (
    filtered_view_sql,
    is_hidden,
    kept_rows_view_sql,
    quote_ident,
    sql_string,
    survivors_view_sql,
)
from taco_gdal.read.query.state import QueryState, RowSet, Step, new_view_name
from taco_gdal.read.query.timerange import TimeRange, parse_range

__all__ = ["apply_predicate", "apply_row_set", "filter_datetime"]

_TIME_TYPES = ("TIMESTAMP", "DATE")


def _columns(state: QueryState, relation: str) -> dict[str, str]:
    return dict(_duck.columns(state.base, state.steps, relation))


def _resolve(
    state: QueryState,
    relation: str,
    level: int,
    requested: str,
    candidates: tuple[str, ...],
    kinds: tuple[str, ...],
    what: str,
) -> tuple[str, str]:
    columns = _columns(state, relation)
    visible = [c for c in columns if not is_hidden(c)]
    if requested == "auto":
        found = next((c for c in candidates if c in columns), None)
        if found is None:
            raise TacoQueryError(
                f"{state.path}: no {what} column at level {level}: looked for "
                f"{list(candidates)}; the level has columns {visible}"
            )
        requested = found
    elif requested not in columns:
        raise TacoQueryError(
            f"{state.path}: {what} column {requested!r} not found at level {level}; the level "
            f"has columns {visible}"
        )
    kind = columns[requested]
    if not kind.startswith(kinds):
        raise TacoQueryError(
            f"{state.path}: {what} column {requested!r} at level {level} has type {kind}, "
            f"expected one of {list(kinds)}"
        )
    return requested, kind


def apply_predicate(
    state: QueryState,
    level: int,
    view: str,
    predicate: str,
    params: dict[str, Any],
    text: str,
    spatial: bool = False,
    rows: RowSet | None = None,
) -> QueryState:
    """The state with ``predicate`` applied at ``level`` (and cascaded up to level 0); with
    ``rows``, ``predicate`` names their table, and ``.data`` intersects them in numpy."""
    bound = tuple(params.items())

    def restricted(source: str) -> str:
        if rows is None:
            return filtered_view_sql(view, source, predicate)
        return kept_rows_view_sql(view, source, predicate)

    if level == 0:
        sql = restricted(state.view)
        step = Step(view, sql, 0, bound, text, spatial, keeps_rows=True, rows=rows)
        if rows is not None and state.only_filters:
            # the view surely binds: created by the first query that needs it, so that
            # .data never makes DuckDB decode deferred columns
            return state.then((step,), view=view)
        steps = _duck.define(state.base, (*state.steps, step), what=text)
        return state.then(steps[len(state.steps) :], view=view)
    if CURRENT_ID not in _columns(state, state.view):
        raise TacoQueryError(
            f"{state.path}: a filter at level {level} keeps level-0 samples by "
            f"{CURRENT_ID!r}, which the current view dropped (keep it in sql() queries)"
        )
    target = state.relation(level)
    new = [Step(view, restricted(target), level, bound, text, spatial, keeps_rows=True)]
    views = state.views
    views[level] = view
    child, child_columns = view, set(_columns(state, target))
    for parent_level in range(level - 1, -1, -1):
        parents = state.relation(parent_level)
        parent_columns = set(_columns(state, parents))
        survivors = new_view_name()
        same_source = SOURCE_FILE in parent_columns and SOURCE_FILE in child_columns
        sql = survivors_view_sql(survivors, parents, child, match_source_file=same_source)
        new.append(Step(survivors, sql, parent_level, spatial=spatial, keeps_rows=True))
        if parent_level > 0:
            views[parent_level] = survivors
        child, child_columns = survivors, parent_columns
    steps = _duck.define(state.base, (*state.steps, *new), what=text)
    return state.then(steps[len(state.steps) :], view=child, level_views=views)


def _as_bound(value: datetime, aware: bool) -> datetime:
    """Naive UTC for TIMESTAMP columns, UTC-aware for TIMESTAMP WITH TIME ZONE."""
    return value.replace(tzinfo=UTC) if aware else value


def filter_datetime(state: QueryState, value: Any, time_col: str, level: int) -> QueryState:
    """See :meth:`TacoDataset.filter_datetime`."""
    span = parse_range(value)
    state.check_level(level)
    relation = state.relation(level)
    column, kind = _resolve(
        state, relation, level, time_col, TIME_START_COLUMNS, _TIME_TYPES, "time"
    )
    view = new_view_name()
    text = f"filter_datetime({span.start} .. {span.end}, {column!r}, level={level})"
    kept = _time_rows(state, level, column, kind, span)
    if kept is not None:
        return apply_row_set(state, level, view, kept, text)
    target = quote_ident(column)
    if kind == "DATE":
        target = f"CAST({target} AS TIMESTAMP)"
    aware = "TIME ZONE" in kind
    clauses = []
    params: dict[str, Any] = {}
    if span.start is not None:
        params[f"{view}_start"] = _as_bound(span.start, aware)
        clauses.append(f"{target} >= getvariable({sql_string(f'{view}_start')})")
    if span.end is not None:
        params[f"{view}_end"] = _as_bound(span.end, aware)
        op = "<=" if span.end_inclusive else "<"
        clauses.append(f"{target} {op} getvariable({sql_string(f'{view}_end')})")
    return apply_predicate(state, level, view, " AND ".join(clauses), params, text)


def apply_row_set(state: QueryState, level: int, view: str, kept: RowSet, text: str) -> QueryState:
    """The state keeping the stored rows ``kept`` at ``level``: a semi-join on a RowSet table."""
    name = f"{view}_rows"
    return apply_predicate(state, level, view, name, {name: kept}, text, rows=kept)


def _time_rows(
    state: QueryState, level: int, column: str, kind: str, span: TimeRange
) -> RowSet | None:
    """The stored level-0 rows in ``span`` decided in Arrow where that is exactly DuckDB's
    comparison (microsecond times or dates, no ``sql()``); else ``None``."""
    if level != 0 or not state.only_filters or column not in state.base.schema(0).names:
        return None
    values = state.base.column(0, column)
    if pa.types.is_date32(values.type):
        values = pc.cast(values, pa.timestamp("us"))
    kind_of = values.type
    if not pa.types.is_timestamp(kind_of) or kind_of.unit != "us":
        return None
    aware = kind_of.tz is not None
    if aware != ("TIME ZONE" in kind):
        return None
    keep = pc.is_valid(values)
    if span.start is not None:
        bound = pa.scalar(_as_bound(span.start, aware), kind_of)
        keep = pc.and_kleene(keep, pc.greater_equal(values, bound))
    if span.end is not None:
        bound = pa.scalar(_as_bound(span.end, aware), kind_of)
        below = pc.less_equal if span.end_inclusive else pc.less
        keep = pc.and_kleene(keep, below(values, bound))
    mask = pc.fill_null(keep, False).to_numpy(zero_copy_only=False)
    return RowSet.of(np.flatnonzero(mask))
