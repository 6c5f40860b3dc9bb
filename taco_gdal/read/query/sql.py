"""The SQL taco_gdal writes: every view the reader creates is built here.

User values are bound as variables; the only literals are container locations.
``internal:gdal_vsi`` is built by :func:`gdal_vsi_sql`, and :func:`gdal_vsi_arrow` is
the same rule in Arrow compute.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Final

import pyarrow as pa
import pyarrow.compute as pc

from taco_gdal.errors import TacoFormatError, TacoQueryError
from taco_gdal.format.names import (
    CURRENT_ID,
    FOLDER,
    GDAL_VSI,
    ID,
    LOCAL_META,
    OFFSET,
    PADDING_PREFIX,
    PARENT_ID,
    RELATIVE_PATH,
    SIZE,
    SOURCE_FILE,
    TYPE,
)
from taco_gdal.format.vsi import SUBFILE_PREFIX
from taco_gdal.read.opening.containers.base import VsiRule

if TYPE_CHECKING:
    from taco_gdal.read.query.state import QueryState

__all__ = [
    "HIDDEN_PREFIX",
    "VISIBLE_INTERNAL",
    "bound_query_sql",
    "descendants_sql",
    "filtered_view_sql",
    "gdal_vsi_arrow",
    "gdal_vsi_sql",
    "is_hidden",
    "level_view_sql",
    "not_padding_mask",
    "not_padding_sql",
    "quote_ident",
    "single_query",
    "sql_string",
    "survivors_view_sql",
]

VISIBLE_INTERNAL: Final = (GDAL_VSI, SOURCE_FILE)
"""The ``internal:*`` columns a frame shows by default: where each sample is."""

HIDDEN_PREFIX = "__taco_"
"""Helper columns the reader adds (decoded point coordinates); never shown to users."""

_POSITION = '"__taco_pos"'


def quote_ident(name: str) -> str:
    """``name`` as a quoted SQL identifier.

    Example:
        >>> quote_ident('internal:gdal_vsi')
        '"internal:gdal_vsi"'
    """
    return '"' + name.replace('"', '""') + '"'


def sql_string(text: str) -> str:
    """``text`` as a SQL string literal.

    Example:
        >>> sql_string("it's")
        "'it''s'"
    """
    return "'" + text.replace("'", "''") + "'"


def is_hidden(column: str) -> bool:
    """True for the reader's helper columns (``__taco_*``)."""
    return column.startswith(HIDDEN_PREFIX)


def not_padding_sql(id_column: str = quote_ident(ID)) -> str:
    """Predicate that drops padding samples (``starts_with``: ``_`` is a ``LIKE`` wildcard)."""
    return f"NOT starts_with({id_column}, {sql_string(PADDING_PREFIX)})"


def _require(columns: Collection[str], needed: Sequence[str], rule: VsiRule, where: str) -> None:
    missing = [name for name in needed if name not in columns]
    if missing:
        raise TacoFormatError(
            f"{where}: building {GDAL_VSI} for a {rule.kind} container needs columns "
            f"{list(needed)}; missing {missing}"
        )


def gdal_vsi_sql(rule: VsiRule, columns: Collection[str], where: str = "level table") -> str:
    """The one SQL expression that builds ``internal:gdal_vsi`` for a row (see :class:`VsiRule`).

    Example:
        >>> rule = VsiRule("subfile", "/data/x.tacozip")
        >>> print(gdal_vsi_sql(rule, ["internal:offset", "internal:size"]))
        '/vsisubfile/' || "internal:offset" || '_' || "internal:size" || ',/data/x.tacozip'
    """
    head = f"{sql_string(SUBFILE_PREFIX)} || {quote_ident(OFFSET)} || '_' || {quote_ident(SIZE)}"
    if rule.kind == "subfile":
        _require(columns, (OFFSET, SIZE), rule, where)
        return f"{head} || {sql_string(',' + rule.root)}"
    if rule.kind == "source_file":
        _require(columns, (OFFSET, SIZE, SOURCE_FILE), rule, where)
        base = "," + rule.root.rstrip("/") + "/"
        return f"{head} || {sql_string(base)} || {quote_ident(SOURCE_FILE)}"
    if rule.kind == "folder":
        _require(columns, (ID, TYPE), rule, where)
        name = quote_ident(RELATIVE_PATH if RELATIVE_PATH in columns else ID)
        return (
            f"{sql_string(rule.root.rstrip('/') + '/')} || rtrim({name}, '/') || "
            f"CASE WHEN {quote_ident(TYPE)} = {sql_string(FOLDER)} "
            f"THEN {sql_string('/' + LOCAL_META)} ELSE '' END"
        )
    _require(columns, (GDAL_VSI,), rule, where)
    return quote_ident(GDAL_VSI)


def gdal_vsi_arrow(rule: VsiRule, table: pa.Table, where: str = "level table") -> pa.Array:
    """:func:`gdal_vsi_sql` in Arrow compute, for a few rows where a query costs more.

    Example:
        >>> rule = VsiRule("subfile", "/data/x.tacozip")
        >>> t = pa.table({"internal:offset": [10], "internal:size": [5]})
        >>> gdal_vsi_arrow(rule, t).to_pylist()
        ['/vsisubfile/10_5,/data/x.tacozip']
    """
    columns = table.column_names
    if rule.kind == "stored":
        _require(columns, (GDAL_VSI,), rule, where)
        return table.column(GDAL_VSI).combine_chunks()
    if rule.kind == "folder":
        _require(columns, (ID, TYPE), rule, where)
        name = table.column(RELATIVE_PATH if RELATIVE_PATH in columns else ID).cast(pa.string())
        meta = pc.if_else(pc.equal(table.column(TYPE), FOLDER), "/" + LOCAL_META, "")
        parts = [rule.root.rstrip("/") + "/", pc.utf8_rtrim(name, characters="/"), meta]
        return pc.binary_join_element_wise(*parts, "").combine_chunks()
    needed = (OFFSET, SIZE, SOURCE_FILE) if rule.kind == "source_file" else (OFFSET, SIZE)
    _require(columns, needed, rule, where)
    offset = table.column(OFFSET).cast(pa.string())
    size = table.column(SIZE).cast(pa.string())
    if rule.kind == "subfile":
        tail: list[object] = ["," + rule.root]
    else:
        tail = ["," + rule.root.rstrip("/") + "/", table.column(SOURCE_FILE).cast(pa.string())]
    joined = pc.binary_join_element_wise(SUBFILE_PREFIX, offset, "_", size, *tail, "")
    return joined.combine_chunks()


def not_padding_mask(table: pa.Table) -> pa.ChunkedArray:
    """:func:`not_padding_sql` in Arrow compute: True for the rows that are not padding."""
    return pc.invert(pc.starts_with(table.column(ID).cast(pa.string()), PADDING_PREFIX))


def level_view_sql(view: str, table: str, rule: VsiRule, columns: Sequence[str]) -> str:
    """``CREATE TEMP VIEW levelK``: the level table, padding hidden, ``internal:gdal_vsi`` last."""
    vsi = gdal_vsi_sql(rule, columns, where=view)
    select = "*"
    if GDAL_VSI in columns:
        select = f"* EXCLUDE ({quote_ident(GDAL_VSI)})"
    return (
        f"CREATE TEMP VIEW {quote_ident(view)} AS SELECT {select}, {vsi} AS "
        f"{quote_ident(GDAL_VSI)} FROM {quote_ident(table)} WHERE {not_padding_sql()}"
    )


def single_query(query: str, where: str) -> str:
    """``query`` if it is exactly one query statement (``SELECT``, ``FROM``-first, ``VALUES``...).

    ``sql()`` wraps the text in a view, so anything else is refused before DuckDB.

    Example:
        >>> single_query("SELECT * FROM data;", "x.tacozip")
        'SELECT * FROM data'
    """
    import duckdb  # at the first query, not with the reader (see taco_gdal.read.query._forksafe)

    try:
        statements = duckdb.extract_statements(query)
    except duckdb.Error as exc:
        first = str(exc).split("\n", 1)[0]
        raise TacoQueryError(f"sql() on {where}: cannot parse the query: {first}") from exc
    kinds = [statement.type.name for statement in statements]
    if kinds != [duckdb.StatementType.SELECT.name]:
        raise TacoQueryError(
            f"sql() on {where}: expected one query statement (SELECT over data, level0, ...), "
            f"found {len(kinds)} statement(s) of type {kinds}"
        )
    return query.strip().rstrip(";").rstrip()


def bound_query_sql(view: str, current: str, query: str) -> str:
    """A user query over ``data``, bound to the current view by a CTE around the untouched text."""
    body = query.strip().rstrip(";").rstrip()
    return (
        f"CREATE TEMP VIEW {quote_ident(view)} AS WITH {quote_ident('data')} AS "
        f"(SELECT * FROM {quote_ident(current)}) SELECT * FROM (\n{body}\n) AS "
        f"{quote_ident('__taco_query')}"
    )


def filtered_view_sql(view: str, source: str, predicate: str) -> str:
    """``source`` restricted by ``predicate`` (order preserved: a plain ``WHERE``)."""
    return (
        f"CREATE TEMP VIEW {quote_ident(view)} AS SELECT * FROM {quote_ident(source)} "
        f"WHERE {predicate}"
    )


def kept_rows_view_sql(view: str, source: str, rows: str) -> str:
    """``source`` restricted to the ``internal:current_id`` values in table ``rows``; the order
    is numbered first and restored (a parallel hash join does not keep it)."""
    return _semi_join_sql(view, source, "s", rows, "r", f"s.{quote_ident(CURRENT_ID)} = r.row")


def _semi_join_sql(view: str, source: str, alias: str, other: str, on: str, when: str) -> str:
    """Rows of ``source`` (as ``alias``) with a match in ``other`` (as ``on``), in order."""
    return (
        f"CREATE TEMP VIEW {quote_ident(view)} AS SELECT {alias}.* EXCLUDE ({_POSITION}) FROM "
        f"(SELECT *, row_number() OVER () AS {_POSITION} FROM {quote_ident(source)}) AS {alias} "
        f"SEMI JOIN {quote_ident(other)} AS {on} ON {when} ORDER BY {alias}.{_POSITION}"
    )


def survivors_view_sql(
    view: str, parents: str, children: str, *, match_source_file: bool = False
) -> str:
    """Rows of ``parents`` with a row in ``children``, in order (``match_source_file``: of
    equal ``internal:source_file`` too)."""
    condition = f"c.{quote_ident(PARENT_ID)} = p.{quote_ident(CURRENT_ID)}"
    if match_source_file:
        condition += (
            f" AND c.{quote_ident(SOURCE_FILE)} IS NOT DISTINCT FROM p.{quote_ident(SOURCE_FILE)}"
        )
    return _semi_join_sql(view, parents, "p", children, "c", condition)


def descendants_sql(
    state: QueryState, level: int, columns_of: Callable[[str], Sequence[str]]
) -> str:
    """SQL of the current rows at ``level``: the level-0 view, or descendants that survive.

    Raises:
        TacoQueryError: the current view dropped ``internal:current_id``.
    """
    relation = state.view
    sql = f"SELECT * FROM {quote_ident(relation)}"
    for k in range(1, level + 1):
        if CURRENT_ID not in columns_of(relation):
            raise TacoQueryError(
                f"{state.path}: level {k} rows are found through {CURRENT_ID!r}, which the "
                "current view dropped (keep it in sql() queries)"
            )
        relation = state.relation(k)
        current = quote_ident(CURRENT_ID)
        sql = (
            f"SELECT * FROM {quote_ident(relation)} WHERE {quote_ident(PARENT_ID)} IN "
            f"(SELECT {current} FROM ({sql})) ORDER BY {current}"
        )
    return sql
