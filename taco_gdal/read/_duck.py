"""DuckDB plumbing: one in-memory database per process, one connection per dataset.

DuckDB loads an extension into a *database*, and loading the spatial extension
costs most of a second (it is an 80 MB binary whose signature is checked).  So
the process holds a single in-memory database; each loaded dataset works on its
own connection to it (``cursor()``), where its views and variables are
connection-local (``CREATE TEMP VIEW``, ``SET VARIABLE``), and the spatial
extension is loaded once, by file path, from the ``duckdb_extension_spatial``
wheel (never installed from the network), the first time a spatial predicate
is needed.

Arrow tables registered with ``register()`` are visible to every connection of
the database, so their names carry the session number (``__taco_3_level0``).
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import logging
import pathlib
import threading
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

import duckdb
import pyarrow as pa

from taco_gdal.errors import TacoQueryError
from taco_gdal.read.query import quote_ident

__all__ = ["Session", "ensure_spatial", "spatial_extension_path"]

log = logging.getLogger(__name__)

_LOCK = threading.Lock()
_DATABASE: duckdb.DuckDBPyConnection | None = None
_SPATIAL_LOADED = False
_SESSION_IDS = itertools.count(1)


def _database() -> duckdb.DuckDBPyConnection:
    global _DATABASE
    with _LOCK:
        if _DATABASE is None:
            _DATABASE = duckdb.connect(":memory:")
        return _DATABASE


def spatial_extension_path() -> pathlib.Path:
    """The spatial extension binary inside the installed ``duckdb_extension_spatial`` wheel.

    Raises:
        TacoQueryError: the wheel is not installed or holds no binary for this DuckDB.

    Example:
        >>> spatial_extension_path().name
        'spatial.duckdb_extension'
    """
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


def ensure_spatial() -> None:
    """Load the spatial extension into the process database, once."""
    global _SPATIAL_LOADED
    if _SPATIAL_LOADED:
        return
    database = _database()
    with _LOCK:
        if _SPATIAL_LOADED:
            return
        path = spatial_extension_path()
        log.info("loading DuckDB spatial extension from %s", path)
        try:
            database.execute(f"LOAD {_string_literal(str(path))}")
        except duckdb.Error as exc:
            raise TacoQueryError(f"cannot load the DuckDB spatial extension {path}: {exc}") from exc
        _SPATIAL_LOADED = True


def _string_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class Session:
    """One DuckDB connection and the names it created for one loaded dataset.

    Datasets derived with ``sql()`` or filters share their parent's session.

    Args:
        where: the dataset location, named in error messages.
    """

    def __init__(self, where: str) -> None:
        self.where = where
        self.id = next(_SESSION_IDS)
        self.conn = _database().cursor()
        self._names = itertools.count(1)
        self._registered: list[str] = []
        self._columns: dict[str, list[tuple[str, str]]] = {}
        self.levels: list[str] = []
        """Registered level tables, level 0 first (their views are ``level0`` ...)."""
        self.rows: list[int] = []
        """Rows of each level table (padding included)."""
        self._finalizer = weakref.finalize(self, _close, self.conn, self._registered)

    def new_name(self, stem: str) -> str:
        """A fresh connection-local name such as ``v7``."""
        return f"{stem}{next(self._names)}"

    def table_name(self, what: str) -> str:
        """A process-unique name for a registered Arrow table."""
        return f"__taco_{self.id}_{what}"

    def register(self, name: str, table: pa.Table) -> None:
        self.conn.register(name, table)
        self._registered.append(name)

    def unregister(self, name: str) -> None:
        self.conn.unregister(name)
        self._registered.remove(name)

    def execute(
        self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None, *, what: str
    ) -> None:
        """Run a statement; a DuckDB error becomes a TacoQueryError naming the dataset."""
        log.debug("%s: %s %s", self.where, sql, params or "")
        try:
            self.conn.execute(sql, params)
        except duckdb.Error as exc:
            raise TacoQueryError(f"{what} on {self.where}: {exc}") from exc

    def fetch(
        self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None, *, what: str
    ) -> pa.Table:
        """Run a query and return its result as an Arrow table."""
        log.debug("%s: %s %s", self.where, sql, params or "")
        try:
            return self.conn.execute(sql, params).to_arrow_table()
        except duckdb.Error as exc:
            raise TacoQueryError(f"{what} on {self.where}: {exc}") from exc

    def set_variable(self, name: str, value: object) -> str:
        """Bind ``value`` to a connection variable; returns the SQL that reads it."""
        self.execute(f"SET VARIABLE {quote_ident(name)} = ?", [value], what="binding a value")
        return f"getvariable({_string_literal(name)})"

    def columns(self, relation: str) -> list[tuple[str, str]]:
        """``(name, DuckDB type)`` of a view or table, without running it."""
        cached = self._columns.get(relation)
        if cached is None:
            rows = self.conn.execute(f"DESCRIBE SELECT * FROM {quote_ident(relation)}").fetchall()
            cached = [(str(r[0]), str(r[1])) for r in rows]
            self._columns[relation] = cached
        return cached

    def column_names(self, relation: str) -> list[str]:
        return [name for name, _ in self.columns(relation)]

    def close(self) -> None:
        """Drop the registered tables and close the connection (idempotent)."""
        self._finalizer()


def _close(conn: duckdb.DuckDBPyConnection, registered: list[str]) -> None:
    for name in list(registered):
        with contextlib.suppress(duckdb.Error):  # the connection may already be gone
            conn.unregister(name)
    registered.clear()
    with contextlib.suppress(duckdb.Error):
        conn.close()
