"""``TacoDataFrame.read(key)``: from a row to its GDAL path or to where its children are.

A row with its ``internal:current_id`` finds its children in the level table in
memory; otherwise (a ``sql()`` result) they come from its ``__meta__`` (one read).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa

from taco_gdal.errors import TacoFormatError, TacoIOError, TacoNavigationError, TacoQueryError
from taco_gdal.format import vsi
from taco_gdal.format.names import (
    CURRENT_ID,
    FILE,
    FOLDER,
    GDAL_VSI,
    ID,
    INTERNAL_PREFIX,
    LOCAL_META,
    PARENT_ID,
    RELATIVE_PATH,
    SOURCE_FILE,
    TYPE,
)
from taco_gdal.io.vsi import VSIFile, read_all
from taco_gdal.read.opening.containers._parse import parse_level
from taco_gdal.read.opening.containers.base import VsiRule
from taco_gdal.read.query import _duck
from taco_gdal.read.query.sql import VISIBLE_INTERNAL, gdal_vsi_sql, not_padding_sql, quote_ident
from taco_gdal.read.query.state import level_view

if TYPE_CHECKING:
    from taco_gdal.read.frames.dataframe import TacoDataFrame
    from taco_gdal.read.query._duck import Session
    from taco_gdal.read.query.state import QueryState

__all__ = ["Children", "locate", "meta_children", "read_meta", "row_position", "shows_internal"]

_PREVIEW = 5
_PANDAS_IAT: Any = pd.DataFrame.iat  # pandas' own ``.iat``: a read, not the frame's guarded one


def _ids_preview(frame: TacoDataFrame) -> str:
    if ID not in frame.columns:
        return "no id column"
    ids = [str(v) for v in frame[ID].head(_PREVIEW)]
    more = ", ..." if len(frame) > _PREVIEW else ""
    return f"ids: {', '.join(ids)}{more}"


def _where(frame: TacoDataFrame) -> str:
    context = frame._taco
    if context is None:
        return "this frame"
    return f"level {context.level} of {context.where}"


def row_position(frame: TacoDataFrame, key: object) -> int:
    """The row of ``frame`` that ``key`` names: a position (negative: from the end) or an id."""
    count = len(frame)
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        position = int(key)
        if not -count <= position < count:
            raise TacoNavigationError(
                f"position {position} is out of range: {_where(frame)} has {count} samples "
                f"(positions 0..{count - 1}); {_ids_preview(frame)}"
            )
        return position % count
    if isinstance(key, str):
        if ID not in frame.columns:
            raise TacoQueryError(f"read({key!r}) needs an {ID!r} column; {_where(frame)} has none")
        matches = np.flatnonzero(frame[ID].to_numpy() == key)
        if matches.size == 0:
            raise TacoNavigationError(
                f"no sample with id {key!r} in {_where(frame)} ({count} samples; "
                f"{_ids_preview(frame)})"
            )
        return int(matches[0])
    raise TacoNavigationError(
        f"read() takes a position (int) or an id (str), got {type(key).__name__} {key!r}"
    )


def shows_internal(frame: TacoDataFrame) -> bool:
    """True when ``frame`` shows ``internal:*`` columns that ``.data`` hides (children follow).

    Example:
        >>> shows_internal(ds.data), shows_internal(ds.frame(internal=True))
        (False, True)
    """
    if CURRENT_ID in frame.columns:  # hash lookups first: iterating labels costs more
        return True
    if frame.index.name == CURRENT_ID:  # .data's shape: nothing it hides can be shown
        return False
    return any(
        isinstance(c, str) and c.startswith(INTERNAL_PREFIX) and c not in VISIBLE_INTERNAL
        for c in frame.columns
    )


def _cell(frame: TacoDataFrame, column: str, position: int) -> Any:
    """One value of ``frame`` (the first column of that name), without building the row."""
    at = frame.columns.get_loc(column)
    if not isinstance(at, int):
        at = int(np.flatnonzero(frame.columns == column)[0])
    return _PANDAS_IAT.fget(frame)[position, at]


def _row_id(frame: TacoDataFrame, position: int) -> int | None:
    """The row's ``internal:current_id`` (a column, else the index of ``.data``), if known."""
    if CURRENT_ID in frame.columns:
        value = _cell(frame, CURRENT_ID, position)
    elif frame.index.name == CURRENT_ID:
        value = frame.index[position]
    else:
        return None
    return None if value is None or pd.isna(value) else int(value)


@dataclass(frozen=True)
class Children:
    """Where the children of a FOLDER row are: rows of ``level`` below row ``parent``.

    Without ``parent``, ``row`` holds the row's values for :func:`meta_children`.
    """

    state: QueryState
    level: int
    internal: bool
    what: str
    parent: int | None
    row: dict[str, Any] | None = None


def locate(frame: TacoDataFrame, key: int | str, internal: bool | None = None) -> str | Children:
    """The GDAL path of sample ``key`` of ``frame`` (a FILE), or where its children are."""
    missing = [c for c in (TYPE, GDAL_VSI) if c not in frame.columns]
    if missing:
        raise TacoQueryError(
            f"read() needs columns {[TYPE, GDAL_VSI]}; {_where(frame)} lacks {missing} "
            "(a sql() query must keep them to navigate)"
        )
    position = row_position(frame, key)
    kind = _cell(frame, TYPE, position)
    if kind == FILE:
        return str(_cell(frame, GDAL_VSI, position))
    sample = _cell(frame, ID, position) if ID in frame.columns else None
    if kind != FOLDER:
        raise TacoFormatError(
            f"sample {sample!r} in {_where(frame)} has type {kind!r}; expected FILE or FOLDER"
        )
    context = frame._taco
    if context is None:
        raise TacoQueryError("read() of a FOLDER needs a frame that came from a TacoDataset")
    shown = shows_internal(frame) if internal is None else internal
    state, level = context.state, context.level + 1
    if level > state.max_depth:
        raise TacoFormatError(
            f"sample {str(sample)!r} at level {context.level} of {state.path} is a FOLDER but "
            f"the dataset has no level {level}"
        )
    what = f"read({str(sample)!r})"
    parent = _row_id(frame, position)
    if parent is not None:
        # The level table holds the children (TACO 3 folders have no __meta__ at all).
        return Children(state, level, shown, what, parent)
    row = frame.iloc[position]
    values = {str(k): v for k, v in row.items()}
    values.pop(CURRENT_ID, None)  # null here: the children are matched by id
    return Children(state, level, shown, what, None, values)


def read_meta(path: str, sample: str) -> tuple[pa.Table, VsiRule]:
    """The ``__meta__`` table at a FOLDER row's GDAL path (one read), and its children's rule."""
    where = f"{path} (__meta__ of sample {sample!r})"
    if path.startswith(vsi.SUBFILE_PREFIX):
        span = vsi.parse_subfile(path)
        with VSIFile(span.container) as f:
            data = f.read_exact(span.offset, span.size, f"__meta__ of sample {sample!r}")
        return parse_level(data, where), VsiRule("subfile", span.container)
    if not path.endswith("/" + LOCAL_META):
        raise TacoFormatError(
            f"{where}: a FOLDER sample's {GDAL_VSI} must be a /vsisubfile/ range or end with "
            f"/{LOCAL_META}"
        )
    return parse_level(read_all(path), where), VsiRule("folder", vsi.parent(path))


def meta_children(children: Children) -> pa.Table:
    """Children of a row without ``internal:current_id``: its ``__meta__``, one range read."""
    state, level, row = children.state, children.level, children.row
    assert row is not None
    base = state.base
    sample = str(row.get(ID))
    try:
        meta, rule = read_meta(str(row[GDAL_VSI]), sample)
    except TacoIOError as exc:
        if row.get(SOURCE_FILE) is not None:
            raise TacoIOError(
                f"{state.path}: cannot read sample {sample!r} from its TACOCAT source ZIP "
                f"{row[SOURCE_FILE]!r}: {exc}"
            ) from exc
        raise
    parent = row.get(CURRENT_ID)
    filtered = state.views.get(level)
    if parent is None and filtered is not None:
        raise TacoQueryError(
            f"a filter is active at level {level} of {state.path}; navigating it needs the "
            f"{CURRENT_ID!r} column, which the current view dropped"
        )
    level_table = level_view(level)

    def rows(session: Session) -> pa.Table:
        with session.registered(meta) as name:
            sql, params = _children_sql(
                level_table,
                [c for c, _ in session.columns(level_table)],
                name,
                meta.column_names,
                rule,
                parent=None if parent is None else int(parent),
                source_file=row.get(SOURCE_FILE),
                filtered=filtered,
            )
            return session.fetch(sql, params)

    return _duck.run(base, state.steps, rows, what=f"read({sample!r})")


def _children_sql(
    level_table: str,
    level_columns: list[str],
    meta_table: str,
    meta_columns: list[str],
    rule: VsiRule,
    *,
    parent: int | None,
    source_file: object,
    filtered: str | None,
) -> tuple[str, dict[str, object]]:
    q = quote_ident
    replaced = {CURRENT_ID, PARENT_ID, SOURCE_FILE, GDAL_VSI}
    joined = [c for c in (CURRENT_ID, PARENT_ID, RELATIVE_PATH) if c in level_columns]
    if parent is not None:
        replaced.update(joined)
    drop = ['"__taco_pos"', '"__taco_vsi"'] + [q(c) for c in meta_columns if c in replaced]
    own = [c for c in meta_columns if c != RELATIVE_PATH]
    vsi_expr = gdal_vsi_sql(rule, own, where=f"__meta__ in {rule.root}")
    params: dict[str, object] = {}
    select = [f"m.* EXCLUDE ({', '.join(drop)})"]
    joins = ""
    if parent is not None:
        params["parent"] = parent
        select += [f"l.{q(c)}" for c in joined]
        columns = ", ".join(q(c) for c in [ID, *joined])
        joins = (
            f" LEFT JOIN (SELECT {columns} FROM {q(level_table)} WHERE {q(PARENT_ID)} = $parent)"
            f" AS l ON l.{q(ID)} = m.{q(ID)}"
        )
    if source_file is not None:
        params["source_file"] = source_file
        select.append(f"$source_file AS {q(SOURCE_FILE)}")
    select.append(f'm."__taco_vsi" AS {q(GDAL_VSI)}')
    where = not_padding_sql(f"m.{q(ID)}")
    if filtered is not None:
        where += (
            f" AND m.{q(ID)} IN (SELECT {q(ID)} FROM {q(filtered)} WHERE {q(PARENT_ID)} = $parent)"
        )
    sql = (
        f'SELECT {", ".join(select)} FROM (SELECT *, row_number() OVER () AS "__taco_pos", '
        f'{vsi_expr} AS "__taco_vsi" FROM {q(meta_table)}) AS m{joins} WHERE {where} '
        'ORDER BY "__taco_pos"'
    )
    return sql, params
