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
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from types import TracebackType
from typing import Any

import numpy as np
import pyarrow as pa

from taco_gdal.errors import TacoQueryError
from taco_gdal.format.names import CURRENT_ID, FIELD_SCHEMA_KEY, PARENT_ID, PIT_SCHEMA_KEY
from taco_gdal.read import filters
from taco_gdal.read._duck import Session
from taco_gdal.read._html import dataset_html, dataset_text
from taco_gdal.read._repair import repair_level_offsets
from taco_gdal.read.containers.base import Container, VsiRule
from taco_gdal.read.dataframe import FrameContext, TacoDataFrame, to_frame
from taco_gdal.read.levels import prepare_level
from taco_gdal.read.navigation import child_counts
from taco_gdal.read.query import bound_query_sql, is_hidden, level_view_sql, quote_ident

__all__ = ["TacoDataset", "install_level", "install_levels"]


def install_level(session: Session, table: pa.Table, rule: VsiRule) -> None:
    """Register the next level table and create its ``levelK`` view on ``session``."""
    level = len(session.levels)
    name = session.table_name(f"level{level}")
    session.register(name, table)
    session.execute(
        level_view_sql(f"level{level}", name, rule, table.column_names),
        what=f"creating view level{level}",
    )
    session.levels.append(name)
    session.rows.append(table.num_rows)


def install_levels(session: Session, tables: Sequence[pa.Table], rule: VsiRule) -> None:
    """Register the level tables and create the ``level0`` ... views on ``session``."""
    for table in tables:
        install_level(session, table, rule)


class TacoDataset:
    """A TACO dataset: COLLECTION metadata and a lazy, chainable query.

    Create one with :func:`taco_gdal.load`.

    Example:
        >>> ds = taco_gdal.load("dataset.tacozip")  # doctest: +SKIP
        >>> ds2 = ds.sql("SELECT * FROM data WHERE cloud_cover < 10")  # doctest: +SKIP
        >>> ds2.filter_bbox(0, 40, 5, 45).data.read(0)  # doctest: +SKIP
        '/vsisubfile/6828_622,/data/dataset.tacozip'
    """

    def __init__(
        self,
        session: Session,
        collection: dict[str, Any],
        *,
        format: str,
        view: str = "level0",
        level_views: Mapping[int, str] | None = None,
        steps: tuple[str, ...] = (),
    ) -> None:
        self._session = session
        self._collection = collection
        self._format = format
        self._view = view
        self._level_views: dict[int, str] = dict(level_views or {})
        self._steps = steps

    @classmethod
    def from_container(cls, container: Container) -> TacoDataset:
        """A dataset over an opened container (what :func:`taco_gdal.load` returns)."""
        session = Session(container.path)
        previous: tuple[pa.Table, np.ndarray] | None = None
        # Hook: level1+ offsets misplaced by tacotoolbox are fixed from __meta__ (warns once).
        levels = repair_level_offsets(container.levels, container.vsi_rule, container.path)
        for level, (table, where) in enumerate(zip(levels, container.sources, strict=True)):
            prepared, stored = prepare_level(
                table, level, previous, where, lambda k: child_counts(session, k)
            )
            install_level(session, prepared, container.vsi_rule)
            previous = (prepared, stored)
        return cls(session, container.collection, format=container.format)

    def _derive(
        self, view: str, step: str, level_views: Mapping[int, str] | None = None
    ) -> TacoDataset:
        return TacoDataset(
            self._session,
            self._collection,
            format=self._format,
            view=view,
            level_views=self._level_views if level_views is None else level_views,
            steps=(*self._steps, step),
        )

    # --- COLLECTION metadata --------------------------------------------------
    @property
    def id(self) -> str | None:
        """Dataset id (COLLECTION ``id``)."""
        return self._collection.get("id")

    @property
    def version(self) -> str | None:
        """Dataset version (COLLECTION ``dataset_version``)."""
        return self._collection.get("dataset_version")

    @property
    def description(self) -> str | None:
        return self._collection.get("description")

    @property
    def tasks(self) -> list[str]:
        return list(self._collection.get("tasks") or [])

    @property
    def extent(self) -> dict[str, Any] | None:
        return copy.deepcopy(self._collection.get("extent"))

    @property
    def providers(self) -> list[dict[str, Any]]:
        return copy.deepcopy(self._collection.get("providers") or [])

    @property
    def licenses(self) -> list[str]:
        return list(self._collection.get("licenses") or [])

    @property
    def title(self) -> str | None:
        return self._collection.get("title")

    @property
    def curators(self) -> list[dict[str, Any]]:
        return copy.deepcopy(self._collection.get("curators") or [])

    @property
    def keywords(self) -> list[str]:
        return list(self._collection.get("keywords") or [])

    @property
    def pit_schema(self) -> dict[str, Any]:
        """``taco:pit_schema``: the structure of the hierarchy."""
        return copy.deepcopy(self._collection.get(PIT_SCHEMA_KEY) or {})

    @property
    def field_schema(self) -> dict[str, Any]:
        """``taco:field_schema``: ``{"level0": [[name, type, description], ...], ...}``."""
        return copy.deepcopy(self._collection.get(FIELD_SCHEMA_KEY) or {})

    @property
    def collection(self) -> dict[str, Any]:
        """A copy of the whole COLLECTION.json."""
        return copy.deepcopy(self._collection)

    # --- structure --------------------------------------------------------------
    @property
    def format(self) -> str:
        """Container format: ``zip``, ``folder``, ``tacocat``, a plugin's, or ``concat``."""
        return self._format

    @property
    def path(self) -> str:
        """GDAL path of what was loaded."""
        return self._session.where

    @property
    def max_depth(self) -> int:
        """Index of the deepest level (0 for a flat dataset)."""
        return len(self._session.levels) - 1

    def level_counts(self) -> list[int]:
        """Rows stored at each level (padding included, filters ignored)."""
        return list(self._session.rows)

    @property
    def columns(self) -> list[str]:
        """Columns of the current view (binding only, nothing runs)."""
        return [c for c in self._session.column_names(self._view) if not is_hidden(c)]

    # --- queries ---------------------------------------------------------------
    def sql(self, query: str) -> TacoDataset:
        """A new dataset over ``query``, where the table ``data`` is this dataset's view.

        Lazy: the view is created (and checked: an unknown column fails here)
        but not run.  ``level0``, ``level1``, ... name the whole level tables.

        Raises:
            TacoQueryError: DuckDB cannot bind the query (message names the dataset).

        Example:
            >>> ds.sql("SELECT * FROM data WHERE cloud_cover < 10").sql(  # doctest: +SKIP
            ...     "SELECT * FROM data ORDER BY cloud_cover").data
        """
        name = self._session.new_name("v")
        self._session.execute(bound_query_sql(name, self._view, query), what="sql()")
        return self._derive(name, f"sql: {' '.join(query.split())}")

    def filter_bbox(
        self,
        minx: float,
        miny: float,
        maxx: float,
        maxy: float,
        geometry_col: str = "auto",
        level: int = 0,
    ) -> TacoDataset:
        """Samples whose geometry intersects the box (level 0, or with a matching descendant).

        Args:
            minx, miny, maxx, maxy: the box, in the column's coordinates
                (EPSG:4326 for centroids); ``minx > maxx`` is a box that crosses
                the antimeridian.
            geometry_col: a WKB column, or ``"auto"``: the first of
                ``istac:geometry``, ``stac:centroid``, ``istac:centroid``.
            level: filter the samples of this level; level-0 samples are kept
                when at least one descendant at ``level`` matches, and reading
                them later returns only matching children.

        Example:
            >>> ds.filter_bbox(-10, 35, 5, 45, level=1).data  # doctest: +SKIP
        """
        return filters.filter_bbox(self, (minx, miny, maxx, maxy), geometry_col, level)

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
            >>> ds.filter_datetime("2023-01-01/2023-06-30T12:00:00Z").data  # doctest: +SKIP
        """
        return filters.filter_datetime(self, datetime_range, time_col, level)

    @property
    def data(self) -> TacoDataFrame:
        """Run the current view: a TacoDataFrame (a GeoDataFrame when there is geometry)."""
        table = self._session.fetch(f"SELECT * FROM {quote_ident(self._view)}", what=".data")
        context = FrameContext(self._session, 0, dict(self._level_views))
        return to_frame(table, context, self._session.where)

    def to_arrow(self, level: int = 0) -> pa.Table:
        """The rows of the current state at ``level``, as Arrow (exact types, no pandas).

        Level 0 is the current view (its order kept).  A deeper level holds the
        descendants of those rows that also survive the filters applied at
        that level, in stored order.  Helper columns are left out.

        Raises:
            TacoQueryError: ``level`` is not 0..max_depth, or the current view
                dropped ``internal:current_id`` (needed to find descendants).

        Example:
            >>> ds.filter_bbox(0, 40, 5, 45, level=1).to_arrow(1).num_rows  # doctest: +SKIP
            12
        """
        if (
            isinstance(level, bool)
            or not isinstance(level, int)
            or not 0 <= level <= self.max_depth
        ):
            raise TacoQueryError(
                f"level must be 0..{self.max_depth} for {self.path}, got {level!r}"
            )
        relation = self._view
        columns = self._session.column_names(relation)
        sql = f"SELECT * FROM {quote_ident(relation)}"
        for k in range(1, level + 1):
            if CURRENT_ID not in columns:
                raise TacoQueryError(
                    f"{self.path}: level {k} rows are found through {CURRENT_ID!r}, which the "
                    "current view dropped (keep it in sql() queries)"
                )
            relation = self._level_views.get(k, f"level{k}")
            columns = self._session.column_names(relation)
            current = quote_ident(CURRENT_ID)
            sql = (
                f"SELECT * FROM {quote_ident(relation)} WHERE {quote_ident(PARENT_ID)} IN "
                f"(SELECT {current} FROM ({sql})) ORDER BY {current}"
            )
        keep = ", ".join(quote_ident(c) for c in columns if not is_hidden(c))
        return self._session.fetch(f"SELECT {keep} FROM ({sql})", what="to_arrow()")

    def read(self, key: int | str) -> str | TacoDataFrame:
        """Shortcut for ``self.data.read(key)``."""
        return self.data.read(key)

    # --- lifecycle and display ----------------------------------------------
    def close(self) -> None:
        """Release the DuckDB connection (shared by datasets derived from this one)."""
        self._session.close()

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
