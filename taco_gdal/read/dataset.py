"""TacoDataset: a loaded dataset, its COLLECTION metadata and a lazy query.

A dataset is a DuckDB view over its level tables plus the COLLECTION dict.
``sql()``, ``filter_bbox()`` and ``filter_datetime()`` return new datasets over
new views; nothing runs until ``.data`` is read.  In every connection:

* ``level0``, ``level1``, ... are the whole level tables (padding samples
  hidden) with ``internal:gdal_vsi`` as last column: use them in ``sql()`` for
  cross-level queries (join ``child."internal:parent_id" =
  parent."internal:current_id"``);
* ``data``, inside a ``sql()`` query, is the dataset's current view.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from datetime import date, datetime
from types import TracebackType
from typing import Any

import numpy as np
import pyarrow as pa

from taco_gdal._memory import RELEASE_BYTES, release_memory
from taco_gdal.errors import TacoQueryError
from taco_gdal.format.names import CURRENT_ID, FIELD_SCHEMA_KEY, PARENT_ID, PIT_SCHEMA_KEY
from taco_gdal.read.query import _duck, filters
from taco_gdal.read._analyst import AnalystMixin
from taco_gdal.read.frames._direct import DirectRows, filtered_rows
from taco_gdal.read.notebook._html import dataset_html, dataset_text
from taco_gdal.read.opening._repair import repair_level_offsets
from taco_gdal.read.opening.containers._deferred import LoadedLevels
from taco_gdal.read.opening.containers.base import Container, VsiRule
from taco_gdal.read.frames.dataframe import FrameContext, TacoDataFrame, to_frame
from taco_gdal.read.frames.convert import PitSchema, to_polars
from taco_gdal.read.query.prepared import prepare_level
from taco_gdal.read.frames.navigation import child_counts
from taco_gdal.read.query.sql import bound_query_sql, is_hidden, quote_ident, single_query
from taco_gdal.read.query.state import LevelTables, QueryState, Step, new_view_name

__all__ = ["TacoDataset", "prepare_tables"]


def prepare_tables(
    tables: Sequence[pa.Table], sources: Sequence[str], rule: VsiRule, where: str
) -> tuple[pa.Table, ...]:
    """The container's level tables with row-position ids (see :func:`prepare_level`).

    A level without ``parent_id`` or ``relative_path`` is attached by counting the
    rows of its parents' ``__meta__`` files, whose paths the levels prepared so
    far give.
    """
    prepared: list[pa.Table] = []
    previous: tuple[pa.Table, np.ndarray] | None = None
    for level, (table, source) in enumerate(zip(tables, sources, strict=True)):

        def counts(k: int) -> np.ndarray:
            return child_counts(LevelTables(tuple(prepared), rule, where), k)

        table, stored = prepare_level(table, level, previous, source, counts)
        prepared.append(table)
        previous = (table, stored)
    return tuple(prepared)


class TacoDataset(AnalystMixin):
    """A TACO dataset: COLLECTION metadata and a lazy, chainable query.

    A dataset is an immutable :class:`~taco_gdal.read.query.state.QueryState`
    (:attr:`state`); DuckDB objects are a cache built from it in the process
    that runs the query.  Create one with :func:`taco_gdal.load`.

    Pickling sends the state: the level tables travel with the dataset (their
    size, :attr:`metadata_nbytes`, is the cost) and the container is not read
    again on the other side.

    What is safe (see also :mod:`taco_gdal._fork`):

    * fork: a child forked at any point after a load, query or read builds its
      own DuckDB database and GDAL network state on first use; datasets and
      frames inherited from the parent work in the child;
    * spawn / forkserver: datasets and frames pickle (steps, filters, level
      views and COLLECTION included);
    * threads: one dataset may be queried and read from many threads at once
      (queries of one dataset are serialised by a lock, sample reads are not);
    * not safe: a rasterio/GDAL handle opened before a fork, used after it.

    Example:
        >>> ds = taco_gdal.load("dataset.tacozip")
        >>> ds2 = ds.sql("SELECT * FROM data WHERE cloud_cover < 10")
        >>> ds2.filter_bbox(-4, 40, -3, 41).data.read(0)
        '/vsisubfile/196_622,.../dataset.tacozip'
    """

    def __init__(self, state: QueryState) -> None:
        self._state = state

    @classmethod
    def from_container(
        cls, container: Container, *, sql_external_access: bool = False
    ) -> TacoDataset:
        """A dataset over an opened container (what :func:`taco_gdal.load` returns).

        Args:
            container: the opened container.
            sql_external_access: let ``sql()`` read files and URLs (see
                :meth:`with_sql_external_access`).
        """
        # Hook: level1+ offsets misplaced by tacotoolbox are fixed from __meta__ (warns once).
        levels = repair_level_offsets(container.levels, container.vsi_rule, container.path)
        tables = prepare_tables(levels, container.sources, container.vsi_rule, container.path)
        loaded = LoadedLevels(tables, getattr(container, "deferred", ()))  # plugins may lack it
        base = LevelTables(loaded, container.vsi_rule, container.path, sql_external_access)
        if base.nbytes >= RELEASE_BYTES:
            release_memory()  # the decode's and the checks' freed buffers, before .data's
        if not all(_duck.keeps_arrow_types(base.schema(k)) for k in range(base.depth)):
            # Types DuckDB may refuse: build the views now, so such a table fails load.
            _duck.columns(base, (), "level0")
        return cls(QueryState(base, container.collection, container.format))

    @property
    def state(self) -> QueryState:
        """The immutable value this dataset is: tables, COLLECTION, query steps, current views."""
        return self._state

    def __reduce__(self) -> tuple[Any, ...]:
        return (TacoDataset, (self._state,))

    @property
    def metadata_nbytes(self) -> int:
        """Bytes of the level tables this dataset carries (what pickling it sends)."""
        return self._state.base.nbytes

    def with_sql_external_access(self, enabled: bool = True) -> TacoDataset:
        """The same dataset, with ``sql()`` allowed (or not) to read files and URLs.

        By default ``sql()`` runs in a DuckDB database with external access off:
        file and URL readers (``read_text``, ``read_parquet``, ``read_csv``,
        ``glob``, ``ST_Read``) fail with a :class:`TacoQueryError`, as do
        smuggled ``COPY``/``ATTACH``/``LOAD``/``INSTALL`` statements.  Opt in
        only for queries you trust: with it, a query can read any file the
        process can.

        Example:
            >>> from pathlib import Path
            >>> _ = Path("labels.csv").write_text("id,label\\ns000,water\\ns001,forest\\n")
            >>> query = "SELECT d.id, l.label FROM data AS d JOIN read_csv('labels.csv') AS l"
            >>> query += " USING (id)"
            >>> ds.with_sql_external_access().sql(query).data
                 id   label
            0  s000   water
            1  s001  forest
            >>> ds.sql(query)
            Traceback (most recent call last):
            taco_gdal.errors.TacoQueryError: sql() on ...: Permission Error: Cannot access file ...
        """
        state = self._state
        base = state.base
        if base.sql_external_access == enabled:
            return self
        opened = base.with_external_access(enabled)
        return TacoDataset(state.with_base(opened))

    def _fetch(self, sql: str, what: str) -> pa.Table:
        return _duck.fetch(self._state.base, self._state.steps, sql, what=what)

    def _current_rows(self, what: str) -> DirectRows:
        """Every row of the current level-0 view.

        From memory when only filters made the view (see :mod:`taco_gdal.read.frames._direct`):
        the table then lacks ``internal:gdal_vsi`` and columns still deferred, which
        functions give.  Otherwise DuckDB's answer, whole (``paths`` is ``None``).
        """
        rows = filtered_rows(self._state)
        if rows is not None:
            return rows
        return DirectRows(
            self._fetch(f"SELECT * FROM {quote_ident(self._state.view)}", what=what), None
        )

    def _column_names(self, relation: str) -> list[str]:
        return [n for n, _ in _duck.columns(self._state.base, self._state.steps, relation)]

    # --- COLLECTION metadata --------------------------------------------------
    @property
    def id(self) -> str | None:
        """Dataset id (COLLECTION ``id``)."""
        return self._state.collection.get("id")

    @property
    def version(self) -> str | None:
        """Dataset version (COLLECTION ``dataset_version``)."""
        return self._state.collection.get("dataset_version")

    @property
    def description(self) -> str | None:
        return self._state.collection.get("description")

    @property
    def tasks(self) -> list[str]:
        return list(self._state.collection.get("tasks") or [])

    @property
    def extent(self) -> dict[str, Any] | None:
        return copy.deepcopy(self._state.collection.get("extent"))

    @property
    def providers(self) -> list[dict[str, Any]]:
        return copy.deepcopy(self._state.collection.get("providers") or [])

    @property
    def licenses(self) -> list[str]:
        return list(self._state.collection.get("licenses") or [])

    @property
    def title(self) -> str | None:
        return self._state.collection.get("title")

    @property
    def curators(self) -> list[dict[str, Any]]:
        return copy.deepcopy(self._state.collection.get("curators") or [])

    @property
    def keywords(self) -> list[str]:
        return list(self._state.collection.get("keywords") or [])

    @property
    def pit_schema(self) -> PitSchema:
        """``taco:pit_schema``: a frozen value that also indexes like the stored dict."""
        return PitSchema.from_dict(self._state.collection.get(PIT_SCHEMA_KEY))

    def to_polars(self, level: int = 0) -> Any:
        """:meth:`to_arrow` as a ``polars.DataFrame`` (needs the ``polars`` extra)."""
        return to_polars(self.to_arrow(level))

    @property
    def field_schema(self) -> dict[str, Any]:
        """``taco:field_schema``: ``{"level0": [[name, type, description], ...], ...}``."""
        return copy.deepcopy(self._state.collection.get(FIELD_SCHEMA_KEY) or {})

    @property
    def collection(self) -> dict[str, Any]:
        """A copy of the whole COLLECTION.json."""
        return copy.deepcopy(dict(self._state.collection))

    # --- structure --------------------------------------------------------------
    @property
    def format(self) -> str:
        """Container format: ``zip``, ``folder``, ``tacocat``, a plugin's, or ``concat``."""
        return self._state.format

    @property
    def path(self) -> str:
        """GDAL path of what was loaded."""
        return self._state.path

    @property
    def max_depth(self) -> int:
        """Index of the deepest level (0 for a flat dataset)."""
        return self._state.max_depth

    def level_counts(self) -> list[int]:
        """Rows stored at each level (padding included, filters ignored)."""
        return list(self._state.base.rows)

    @property
    def columns(self) -> list[str]:
        """Columns of the current view (binding only, nothing runs)."""
        return [c for c in self._column_names(self._state.view) if not is_hidden(c)]

    # --- queries ---------------------------------------------------------------
    def sql(self, query: str) -> TacoDataset:
        """A new dataset over ``query``, where the table ``data`` is this dataset's view.

        Lazy: the view is created (and checked: an unknown column fails here)
        but not run.  ``level0``, ``level1``, ... name the whole level tables.

        Raises:
            TacoQueryError: DuckDB cannot bind the query (message names the dataset).

        Example:
            >>> ds.sql("SELECT * FROM data WHERE cloud_cover < 10").sql(
            ...     "SELECT * FROM data ORDER BY cloud_cover DESC"
            ... ).data[["id", "cloud_cover"]]  # doctest: +NORMALIZE_WHITESPACE
                                   id  cloud_cover
            internal:current_id
            1                    s001          5.0
            0                    s000          0.0
        """
        state = self._state
        body = single_query(query, where=state.path)
        view = new_view_name()
        step = Step(
            view,
            bound_query_sql(view, state.view, body),
            0,
            text=f"sql: {' '.join(body.split())}",
        )
        steps = _duck.define(state.base, (*state.steps, step), what="sql()")
        return TacoDataset(state.then(steps[len(state.steps) :], view=view))

    def filter_bbox(
        self,
        minx: float,
        miny: float,
        maxx: float,
        maxy: float,
        geometry_col: str = "auto",
        level: int = 0,
        crs: str = "EPSG:4326",
    ) -> TacoDataset:
        """Samples whose footprint intersects the box (level 0, or with a matching descendant).

        The box is in EPSG:4326 (lon/lat) unless ``crs`` says otherwise; the
        footprints are compared in EPSG:4326 whatever CRS they are stored in
        (``istac:geometry`` in its ``istac:crs``, densified reprojection, cut at
        the antimeridian), computed once per dataset at the first spatial filter.

        Args:
            minx, miny, maxx, maxy: the box, in this order; in EPSG:4326
                ``minx > maxx`` is a box crossing the antimeridian (STAC).
            geometry_col: a WKB column, or ``"auto"``: the first of
                ``istac:geometry``, ``stac:centroid``, ``istac:centroid``.
            level: filter the samples of this level; level-0 samples are kept
                when at least one descendant at ``level`` matches, and reading
                them later returns only matching children.
            crs: the box's CRS (anything pyproj reads); it is reprojected,
                densified, to EPSG:4326.

        Raises:
            TacoQueryError: ``miny > maxy``, latitudes outside [-90, 90] or
                longitudes outside [-180, 180] in EPSG:4326, ``minx > maxx`` in
                another CRS; the message shows the box and the expected order.

        Warns:
            TacoWarning: the box misses the dataset's extent entirely (the
                message gives the extent: a swapped axis order shows here).

        Example:
            >>> ds.filter_bbox(-4.0, 39.9, -3.0, 40.8).data.id.tolist()
            ['s000', 's001', 's002', 's003']
            >>> import warnings
            >>> with warnings.catch_warnings(record=True) as caught:
            ...     warnings.simplefilter("always")
            ...     ds.filter_bbox(170, -20, -170, -10).data.id.tolist()  # across the antimeridian
            []
            >>> caught[0].category.__name__  # and far from these samples in Spain
            'TacoWarning'
        """
        box = (minx, miny, maxx, maxy)
        return TacoDataset(filters.filter_bbox(self._state, box, geometry_col, level, crs))

    def filter_datetime(
        self,
        datetime_range: str | datetime | date | tuple[Any, Any] | list[Any],
        time_col: str = "auto",
        level: int = 0,
    ) -> TacoDataset:
        """Samples whose start time is in a range (exact to the microsecond).

        Args:
            datetime_range: ``"a/b"`` (ISO 8601, ``..`` or empty for open ends), a
                datetime (that instant), a date or date-only string (that whole
                day), or a ``(start, end)`` tuple.  Date-only ends cover their
                whole day; naive times are UTC.
            time_col: a timestamp column, or ``"auto"``: ``istac:time_start``,
                then ``stac:time_start``.
            level: as in :meth:`filter_bbox`.

        Example:
            >>> ds.filter_datetime("2024-03-01/2024-03-15T12:00:00Z").data.id.tolist()
            ['s000', 's001']
        """
        return TacoDataset(filters.filter_datetime(self._state, datetime_range, time_col, level))

    @property
    def data(self) -> TacoDataFrame:
        """Run the current view: a TacoDataFrame (a GeoDataFrame when there is geometry).

        The reader's bookkeeping columns (``internal:*``) are hidden, except
        ``internal:gdal_vsi`` (the sample's GDAL path) and
        ``internal:source_file`` (the TACOCAT part of a row);
        ``internal:current_id`` is the frame's index, so ``read()`` still finds
        a FOLDER's children.  ``frame(internal=True)`` returns every column.

        Example:
            >>> [c for c in ds.data.columns if c.startswith("internal:")]
            ['internal:gdal_vsi']
        """
        rows = self._current_rows(what=".data")
        context = FrameContext(self._state, 0)
        return to_frame(
            rows.table, context, self._state.path, internal=False, paths=rows.paths, lazy=rows.lazy
        )

    def to_arrow(self, level: int = 0) -> pa.Table:
        """The rows of the current state at ``level``, as Arrow (exact types, no pandas).

        Level 0 is the current view (its order kept).  A deeper level holds the
        descendants of those rows that also survive the filters applied at
        that level, in stored order.  Helper columns are left out.

        Raises:
            TacoQueryError: ``level`` is not 0..max_depth, or the current view
                dropped ``internal:current_id`` (needed to find descendants).

        Example:
            >>> tiles.filter_bbox(-3.3, 40.5, -3.1, 40.7, level=1).to_arrow(1).num_rows
            2
        """
        if (
            isinstance(level, bool)
            or not isinstance(level, int)
            or not 0 <= level <= self.max_depth
        ):
            raise TacoQueryError(
                f"level must be 0..{self.max_depth} for {self.path}, got {level!r}"
            )
        relation = self._state.view
        columns = self._column_names(relation)
        sql = f"SELECT * FROM {quote_ident(relation)}"
        for k in range(1, level + 1):
            if CURRENT_ID not in columns:
                raise TacoQueryError(
                    f"{self.path}: level {k} rows are found through {CURRENT_ID!r}, which the "
                    "current view dropped (keep it in sql() queries)"
                )
            relation = self._state.relation(k)
            columns = self._column_names(relation)
            current = quote_ident(CURRENT_ID)
            sql = (
                f"SELECT * FROM {quote_ident(relation)} WHERE {quote_ident(PARENT_ID)} IN "
                f"(SELECT {current} FROM ({sql})) ORDER BY {current}"
            )
        keep = ", ".join(quote_ident(c) for c in columns if not is_hidden(c))
        return self._fetch(f"SELECT {keep} FROM ({sql})", what="to_arrow()")

    def read(self, key: int | str) -> str | TacoDataFrame:
        """Shortcut for ``self.data.read(key)``."""
        return self.data.read(key)

    # --- lifecycle and display ----------------------------------------------
    def close(self) -> None:
        """Release the DuckDB connection (shared by datasets derived from this one).

        Only a cache is released: a later query builds it again.
        """
        _duck.release(self._state.base)

    def __enter__(self) -> TacoDataset:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return dataset_text(self)

    def _repr_html_(self) -> str:
        return dataset_html(self)
