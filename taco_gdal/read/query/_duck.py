"""DuckDB as a cache of query states: built on demand, rebuilt when it cannot be trusted.

Per process, one database per kind (external access off or on) and one session per
:class:`~taco_gdal.read.query.state.LevelTables`, rebuilt after a fork, unpickling or a
fatal DuckDB error (the query is retried once).  ``LOAD`` works only before external
access is locked, so the first spatial query replaces the database.  User SQL sees
only the level tables (external access, replacement scans and configuration locked).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import importlib.util
import itertools
import logging
import os
import pathlib
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar

import pyarrow as pa

from taco_gdal import _fork
from taco_gdal.errors import TacoFormatError, TacoQueryError
from taco_gdal.read.query import _forksafe
from taco_gdal.read.query.sql import level_view_sql, quote_ident, sql_string
from taco_gdal.read.query.state import LevelTables, RowSet, Step, level_view

if TYPE_CHECKING:
    # imported by the first query: ``load`` and ``.data`` of most datasets never run one
    import duckdb

__all__ = [
    "Session",
    "columns",
    "define",
    "fetch",
    "interrupt",
    "keeps_arrow_types",
    "release",
    "spatial_extension_path",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

_LOCK = threading.Lock()
_SESSION_IDS = itertools.count(1)
_MISSING_SPATIAL = "exists in the spatial extension"


@dataclass(eq=False)
class Database:
    """One in-memory DuckDB database of this process."""

    conn: duckdb.DuckDBPyConnection
    pid: int
    external_access: bool
    spatial: bool
    alive: bool = True


_databases: dict[bool, Database] = {}
_sessions: weakref.WeakKeyDictionary[LevelTables, Session] = weakref.WeakKeyDictionary()
_orphans: list[object] = []
"""DuckDB objects inherited from a parent process: kept, never used, never freed."""


def spatial_extension_path() -> pathlib.Path:
    """The spatial extension binary inside the installed ``duckdb_extension_spatial`` wheel."""
    import duckdb

    spec = importlib.util.find_spec("duckdb_extension_spatial")
    if spec is None or not spec.submodule_search_locations:
        raise TacoQueryError(
            "spatial filters need the DuckDB spatial extension: expected the Python package "
            f"duckdb-extension-spatial=={duckdb.__version__}, found none installed"
        )
    root = pathlib.Path(next(iter(spec.submodule_search_locations)))
    wanted = root / "extensions" / f"v{duckdb.__version__}" / "spatial.duckdb_extension"
    if wanted.is_file():
        return wanted
    found = sorted(root.glob("extensions/*/spatial.duckdb_extension"))
    raise TacoQueryError(
        f"spatial filters need {wanted} (DuckDB {duckdb.__version__}); the installed "
        f"duckdb-extension-spatial provides {[str(p) for p in found] or 'nothing'}"
    )


def _open_database(external_access: bool, spatial: bool) -> Database:
    import duckdb

    config: dict[str, str | bool | int | float | list[str]] = {}
    if not external_access:
        config["python_enable_replacements"] = False
    conn = duckdb.connect(":memory:", config=config)
    if spatial:
        path = spatial_extension_path()
        log.info("loading DuckDB spatial extension from %s", path)
        try:
            conn.execute(f"LOAD {sql_string(str(path))}")
        except duckdb.Error as exc:
            raise TacoQueryError(f"cannot load the DuckDB spatial extension {path}: {exc}") from exc
    if not external_access:  # after LOAD: DuckDB refuses LOAD once external access is off
        conn.execute("SET enable_external_access = false")
        conn.execute("SET lock_configuration = true")
    return Database(conn, os.getpid(), external_access, spatial)


def database(external_access: bool = False, spatial: bool = False) -> Database:
    """The process database of this kind (with the spatial extension if asked), made when needed."""
    with _LOCK:
        current = _databases.get(external_access)
        usable = current is not None and current.alive and current.pid == os.getpid()
        if current is not None and usable and (current.spatial or not spatial):
            return current
        keep_spatial = spatial or (current is not None and usable and current.spatial)
        fresh = _open_database(external_access, keep_spatial)
        _databases[external_access] = fresh
        return fresh


def _retire(db: Database) -> None:
    """Stop using ``db`` (DuckDB invalidated it); sessions on it rebuild on their next query."""
    with _LOCK:
        db.alive = False
        if _databases.get(db.external_access) is db:
            del _databases[db.external_access]


class Session:
    """The DuckDB objects of one :class:`LevelTables` in one database."""

    def __init__(self, base: LevelTables, db: Database) -> None:
        self.database = db
        self.where = base.where
        self.pid = os.getpid()
        self.id = next(_SESSION_IDS)
        self.lock = threading.RLock()
        self.conn = db.conn.cursor()
        self._created: set[str] = set()
        self._columns: dict[str, list[tuple[str, str]]] = {}
        self._extra = itertools.count(1)
        for level, table in enumerate(base.tables):
            name = self.table_name(f"level{level}")
            self.conn.register(name, table)
            self.conn.execute(
                level_view_sql(level_view(level), name, base.rule, table.column_names)
            )

    def table_name(self, what: str) -> str:
        """A name for a registered Arrow table (connection-local)."""
        return f"__taco_{self.id}_{what}"

    def ensure(self, steps: Sequence[Step]) -> None:
        """Create the views of ``steps`` this connection does not have yet, in order."""
        for step in steps:
            if step.view in self._created:
                continue
            for name, value in step.params:
                if isinstance(value, RowSet):
                    rows = pa.table({"row": pa.array(value.positions(), pa.int64())})
                    self.conn.register(name, rows)
                else:
                    self.conn.execute(f"SET VARIABLE {quote_ident(name)} = ?", [value])
            self.conn.execute(step.sql)
            self._created.add(step.view)

    def fetch(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> pa.Table:
        log.debug("%s: %s %s", self.where, sql, params or "")
        return self.conn.execute(sql, params).to_arrow_table()

    def columns(self, relation: str) -> list[tuple[str, str]]:
        """``(name, DuckDB type)`` of a view, without running it."""
        cached = self._columns.get(relation)
        if cached is None:
            rows = self.conn.execute(f"DESCRIBE SELECT * FROM {quote_ident(relation)}").fetchall()
            cached = [(str(r[0]), str(r[1])) for r in rows]
            self._columns[relation] = cached
        return cached

    @contextlib.contextmanager
    def registered(self, table: pa.Table) -> Iterator[str]:
        """Register ``table`` under a fresh name for the span of a ``with`` block."""
        name = self.table_name(f"extra{next(self._extra)}")
        self.conn.register(name, table)
        try:
            yield name
        finally:
            self.conn.unregister(name)


def keeps_arrow_types(schema: pa.Schema) -> bool:
    """True when DuckDB would give back exactly ``schema``'s types (and names, whose case
    it ignores): such tables are served from memory without asking DuckDB."""
    names = [field.name.lower() for field in schema]
    return len(set(names)) == len(names) and all(_kept(field.type) for field in schema)


def _kept(kind: pa.DataType) -> bool:
    if pa.types.is_timestamp(kind):
        return kind.tz is None
    if pa.types.is_list(kind):  # DuckDB renames the item field; Arrow's equality ignores it
        return _kept(kind.value_type)
    return bool(
        pa.types.is_boolean(kind)
        or pa.types.is_integer(kind)
        or kind in (pa.float32(), pa.float64(), pa.string(), pa.binary(), pa.date32())
    )


def _session(base: LevelTables, spatial: bool) -> Session:
    db = database(base.sql_external_access, spatial)
    with _LOCK:
        current = _sessions.get(base)
        if current is not None and current.database is db:
            return current
        if current is not None and current.pid != os.getpid():  # a parent's, never freed here
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(current))
            _orphans.append(current)
        session = Session(base, db)
        _sessions[base] = session
        return session


def _message(exc: BaseException) -> str:
    """DuckDB's message without its stack trace and boilerplate."""
    return str(exc).split("\n\nStack Trace", 1)[0].split("\n\nThis error signals", 1)[0].strip()


def run(
    base: LevelTables,
    steps: Sequence[Step],
    action: Callable[[Session], T],
    *,
    what: str,
    spatial: bool = False,
) -> T:
    """Run ``action`` on the session of ``base`` once ``steps`` exist there (retried once
    on a fresh database after a fatal DuckDB error)."""
    import duckdb

    fatal = (duckdb.FatalException, duckdb.InternalException)
    spatial = spatial or any(step.spatial for step in steps)
    for attempt in (1, 2):
        try:
            session = _session(base, spatial)
        except duckdb.Error as exc:  # registering the level tables failed: a column type
            odd = [
                f"{field.name!r} ({field.type})"
                for table in base.tables
                for field in table.schema
                if not keeps_arrow_types(pa.schema([field]))
            ]
            raise TacoFormatError(
                f"{base.where}: expected level tables DuckDB can read; found columns of "
                f"types it may not ({', '.join(odd) or 'none known'}): {_message(exc)}"
            ) from exc
        try:
            with session.lock:
                session.ensure(steps)
                return action(session)
        except fatal as exc:
            _retire(session.database)
            log.warning("%s: DuckDB failed (%s); database replaced", base.where, _message(exc))
            if attempt == 2:
                raise TacoQueryError(
                    f"{what} on {base.where}: DuckDB failed fatally twice, on two fresh "
                    f"databases (the metadata is probably malformed; other datasets are not "
                    f"affected): {_message(exc)}"
                ) from exc
        except duckdb.Error as exc:
            raise TacoQueryError(f"{what} on {base.where}: {_message(exc)}") from exc
    raise AssertionError("unreachable")  # pragma: no cover


def fetch(
    base: LevelTables,
    steps: Sequence[Step],
    sql: str,
    params: Sequence[Any] | Mapping[str, Any] | None = None,
    *,
    what: str,
) -> pa.Table:
    """Run ``sql`` (over the views of ``steps``) and return its result as Arrow."""
    return run(base, steps, lambda s: s.fetch(sql, params), what=what)


def columns(base: LevelTables, steps: Sequence[Step], relation: str) -> list[tuple[str, str]]:
    """``(name, DuckDB type)`` of ``relation``; a filtered level with deferred columns is
    described from its schema, since registering it with DuckDB would decode them."""
    level = _filtered_level(steps, relation)
    if level is not None and base.pending(level):
        return _level_columns(base, level)
    return run(base, steps, lambda s: s.columns(relation), what=f"describing {relation}")


def _filtered_level(steps: Sequence[Step], relation: str) -> int | None:
    """The level whose columns ``relation`` has when only filters made it, else ``None``."""
    if not all(step.keeps_rows for step in steps):
        return None
    for step in steps:
        if step.view == relation:
            return step.level
    prefix = level_view(0)[:-1]
    number = relation[len(prefix) :]
    if relation.startswith(prefix) and number.isdigit():
        return int(number)
    return None


_described: weakref.WeakKeyDictionary[LevelTables, dict[int, list[tuple[str, str]]]] = (
    weakref.WeakKeyDictionary()
)


def _level_columns(base: LevelTables, level: int) -> list[tuple[str, str]]:
    """``(name, DuckDB type)`` of ``level<k>``, asked of DuckDB over no rows of its schema."""
    with _LOCK:
        known = _described.get(base, {}).get(level)
    if known is not None:
        return known
    import duckdb

    schema = base.schema(level)
    cursor = database(False, False).conn.cursor()
    try:
        name, view = f"empty_{next(_SESSION_IDS)}", f"shape_{next(_SESSION_IDS)}"
        cursor.register(name, schema.empty_table())
        cursor.execute(level_view_sql(view, name, base.rule, schema.names))
        rows = cursor.execute(f"DESCRIBE SELECT * FROM {quote_ident(view)}").fetchall()
    except duckdb.Error as exc:
        raise TacoQueryError(f"describing level {level} of {base.where}: {exc}") from exc
    finally:
        cursor.close()
    described = [(str(r[0]), str(r[1])) for r in rows]
    with _LOCK:
        return _described.setdefault(base, {}).setdefault(level, described)


def define(base: LevelTables, steps: Sequence[Step], *, what: str) -> Sequence[Step]:
    """Create the views of ``steps`` now, so that a query that cannot bind fails here;
    returns ``steps``, marked ``spatial`` where DuckDB said they need that extension."""
    try:
        run(base, steps, lambda s: None, what=what)
    except TacoQueryError as exc:
        if _MISSING_SPATIAL not in str(exc) or all(step.spatial for step in steps):
            raise
        steps = [replace(step, spatial=True) for step in steps]
        run(base, steps, lambda s: None, what=what)
    return steps


def release(base: LevelTables) -> None:
    """Drop the session of ``base`` (rebuilt if the dataset is queried again)."""
    with _LOCK:
        session = _sessions.pop(base, None)
    if session is not None and session.pid == os.getpid():
        import duckdb

        with session.lock, contextlib.suppress(duckdb.Error):
            session.conn.close()


def interrupt(base: LevelTables) -> None:
    """Interrupt the query running on the session of ``base`` (from another thread).

    Example:
        >>> interrupt(ds.state.base)  # no query is running: nothing happens
        >>> len(ds.data)  # and the session still answers
        4
    """
    with _LOCK:
        session = _sessions.get(base)
    if session is not None and session.pid == os.getpid():
        session.conn.interrupt()


def _forget_parent_state() -> None:
    """In a forked child: keep the parent's DuckDB objects unfreed (their destructors would
    wait for the parent's worker threads), and start afresh."""
    global _LOCK
    _LOCK = threading.Lock()
    inherited: list[object] = [*_databases.values(), *_sessions.values()]
    for obj in inherited:
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(obj))
    _orphans.extend(inherited)
    _databases.clear()
    _sessions.clear()


def _close_at_exit() -> None:
    """Close this process's DuckDB connections before finalisation, where DuckDB can abort
    the process (duckdb issue 13904)."""
    with _LOCK:
        sessions = list(_sessions.values())
        databases = list(_databases.values())
        _sessions.clear()
        _databases.clear()
    me = os.getpid()
    mine = [s.conn for s in sessions if s.pid == me] + [d.conn for d in databases if d.pid == me]
    if not mine:  # no query ran here: DuckDB may not even be imported
        return
    import duckdb

    for conn in mine:
        with contextlib.suppress(duckdb.Error):
            conn.close()


_fork.after_fork_in_child(_forget_parent_state)
_forksafe.install()
atexit.register(_close_at_exit)
