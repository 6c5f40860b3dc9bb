"""TacoDataset: a loaded dataset, its COLLECTION metadata and a lazy query.

``sql()`` and the filters return new datasets over new DuckDB views; nothing runs
until ``.data`` is read.  In ``sql()``, ``data`` is the dataset's current view and
``level0``, ``level1``, ... the whole level tables (padding hidden, with
``internal:gdal_vsi``), for cross-level joins on ``child."internal:parent_id" =
parent."internal:current_id"``.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterator, Sequence
from datetime import date, datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from taco_gdal.errors import TacoQueryError
from taco_gdal.format.names import FIELD_SCHEMA_KEY, PIT_SCHEMA_KEY
from taco_gdal.read import conversions as _conversions
from taco_gdal.read.frames._direct import DirectRows, filtered_rows
from taco_gdal.read.frames._rowread import read_row
from taco_gdal.read.frames.convert import PitSchema, to_polars
from taco_gdal.read.frames.dataframe import FrameContext, TacoDataFrame, to_frame
from taco_gdal.read.notebook import _plots
from taco_gdal.read.notebook._html import dataset_html, dataset_text
from taco_gdal.read.opening.containers.base import Container
from taco_gdal.read.query import _duck, filters
from taco_gdal.read.query.prepared import prepared_state
from taco_gdal.read.query.sketches import ViewStats, stats_of_view
from taco_gdal.read.query.sql import (
    bound_query_sql,
    descendants_sql,
    is_hidden,
    quote_ident,
    single_query,
)
from taco_gdal.read.query.state import QueryState, Step, new_view_name
from taco_gdal.read.query.stats import view_stats
from taco_gdal.read.spatial.crs import WGS84
from taco_gdal.read.spatial.filters import filter_box, filter_shape

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes


__all__ = ["TacoDataset"]

Bands = int | Sequence[int] | None


class TacoDataset:
    """A TACO dataset: COLLECTION metadata and a lazy, chainable query.

    A dataset is an immutable :class:`~taco_gdal.read.query.state.QueryState`
    (:attr:`state`); create one with :func:`taco_gdal.load`.  It pickles with its
    level tables (:attr:`metadata_nbytes`), works in forked children (which build
    their own DuckDB and GDAL state), and may be queried and read from many
    threads.  A rasterio/GDAL handle opened before a fork must not be used after it.

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
        """A dataset over an opened container (what :func:`taco_gdal.load` returns)."""
        return cls(prepared_state(container, sql_external_access))

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

        By default file and URL readers (``read_csv``, ``glob``, ``ST_Read``, ...)
        fail in ``sql()`` with a :class:`TacoQueryError`.  Opt in only for queries
        you trust: a query can then read any file the process can.

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
        base = self._state.base
        if base.sql_external_access == enabled:
            return self
        return TacoDataset(self._state.with_base(base.with_external_access(enabled)))

    def _fetch(self, sql: str, what: str) -> pa.Table:
        return _duck.fetch(self._state.base, self._state.steps, sql, what=what)

    def _current_rows(self, what: str) -> DirectRows:
        """Every row of the current level-0 view: from memory when only filters made it."""
        rows = filtered_rows(self._state)
        if rows is not None:
            return rows
        return DirectRows(
            self._fetch(f"SELECT * FROM {quote_ident(self._state.view)}", what=what), None
        )

    def _frame(self, internal: bool, what: str) -> TacoDataFrame:
        rows = self._current_rows(what)
        state = self._state
        context = FrameContext(state, 0)
        return to_frame(
            rows.table, context, state.path, internal=internal, paths=rows.paths, lazy=rows.lazy
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

        Footprints are compared in EPSG:4326 whatever CRS they are stored in
        (densified reprojection, cut at the antimeridian).

        Args:
            minx, miny, maxx, maxy: the box, in this order; in EPSG:4326
                ``minx > maxx`` is a box crossing the antimeridian (STAC).
            geometry_col: a WKB column, or ``"auto"``: the first of
                ``istac:geometry``, ``stac:centroid``, ``istac:centroid``.
            level: filter the samples of this level; level-0 samples are kept
                when a descendant at ``level`` matches, and read only matching children.
            crs: the box's CRS (anything pyproj reads).

        Raises:
            TacoQueryError: ``miny > maxy``, coordinates out of range in
                EPSG:4326, or ``minx > maxx`` in another CRS.

        Warns:
            TacoWarning: the box misses the dataset's extent (a swapped axis order).

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
        return TacoDataset(filter_box(self._state, box, geometry_col, level, crs))

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

        ``internal:*`` columns are hidden but ``internal:gdal_vsi`` and
        ``internal:source_file``; ``internal:current_id`` is the index.

        Example:
            >>> [c for c in ds.data.columns if c.startswith("internal:")]
            ['internal:gdal_vsi']
        """
        return self._frame(internal=False, what=".data")

    def to_arrow(self, level: int = 0) -> pa.Table:
        """The rows of the current state at ``level``, as Arrow (exact types, no pandas).

        A deeper level holds the surviving descendants of the level-0 rows, in
        stored order.

        Raises:
            TacoQueryError: ``level`` is not 0..max_depth, or the current view
                dropped ``internal:current_id``.

        Example:
            >>> tiles.filter_bbox(-3.3, 40.5, -3.1, 40.7, level=1).to_arrow(1).num_rows
            2
        """
        state = self._state
        state.check_level(level)
        sql = descendants_sql(state, level, self._column_names)
        columns = self._column_names(state.relation(level))
        keep = ", ".join(quote_ident(c) for c in columns if not is_hidden(c))
        return self._fetch(f"SELECT {keep} FROM ({sql})", what="to_arrow()")

    # Conversions to other ecosystems' objects: functions over the dataset, see read/conversions.py.
    to_stac = _conversions.to_stac
    to_stac_collection = _conversions.to_stac_collection
    to_stac_geoparquet = _conversions.to_stac_geoparquet
    to_croissant = _conversions.to_croissant
    to_xarray = _conversions.to_xarray

    def read(self, key: int | str) -> str | TacoDataFrame:
        """Shortcut for ``self.data.read(key)`` (one row looked at, not the whole frame)."""
        found = read_row(self._state, self._current_rows("read()"), key)
        return self.data.read(key) if found is None else found

    # --- lifecycle and display ----------------------------------------------
    def close(self) -> None:
        """Release the DuckDB connection (a cache, shared by derived datasets, rebuilt on use)."""
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

    def filter_geometry(
        self,
        geometry: Any,
        crs: str = WGS84,
        geometry_col: str = "auto",
        level: int = 0,
    ) -> TacoDataset:
        """Samples whose footprint intersects a shapely geometry, compared as in ``filter_bbox``.

        Raises:
            TacoQueryError: not a shapely geometry, empty, or an unknown CRS.

        Example:
            >>> import shapely
            >>> aoi = shapely.box(-3.7, 40.38, -3.6, 40.42)
            >>> ds.filter_geometry(aoi).data.id.tolist()
            ['s000', 's001']
        """
        return TacoDataset(filter_shape(self._state, geometry, geometry_col, level, crs))

    def __len__(self) -> int:
        """Level-0 rows of the current view (after filters; padding hidden)."""
        view = quote_ident(self._state.view)
        table = self._fetch(f"SELECT count(*) AS n FROM {view}", what="len()")
        return int(table.column("n")[0].as_py())

    def head(self, n: int = 5) -> TacoDataFrame:
        """The first ``n`` rows of the current view, as a TacoDataFrame.

        Example:
            >>> first = ds.filter_datetime("2024").head(3)
            >>> first[["id", "stac:time_start"]]  # doctest: +NORMALIZE_WHITESPACE
                                   id     stac:time_start
            internal:current_id
            0                    s000 2024-03-01 10:30:00
            1                    s001 2024-03-11 10:30:00
            2                    s002 2024-03-21 10:30:00
        """
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise TacoQueryError(f"head(n): expected an int >= 0, got {n!r}")
        view = quote_ident(self._state.view)
        table = self._fetch(f"SELECT * FROM {view} LIMIT {int(n)}", what="head()")
        return to_frame(table, FrameContext(self._state, 0), self._state.path, internal=False)

    def __iter__(self) -> Iterator[pd.Series[Any]]:
        """The rows of the current view, one ``pandas.Series`` each (like ``iterrows``).

        Example:
            >>> for row in ds.filter_datetime("2024-03-01/2024-03-15"):
            ...     print(row["id"], row["internal:gdal_vsi"])
            s000 /vsisubfile/196_622,.../dataset.tacozip
            s001 /vsisubfile/857_622,.../dataset.tacozip
        """
        yield from (row for _, row in self.data.iterrows())

    def frame(self, internal: bool = False) -> TacoDataFrame:
        """``.data``, with every ``internal:*`` column when ``internal`` is True.

        Example:
            >>> ds.frame(internal=True)["internal:offset"].tolist()
            [196, 857, 1518, 2179]
        """
        return self._frame(internal, what=".frame()")

    # --- statistics (geotiff:stats, see taco_gdal.read.query.sketches) -------------
    def stats(
        self, band: Bands = None, q: Sequence[float] = (2, 25, 50, 75, 98), level: int = 0
    ) -> ViewStats:
        """Mean, std, min, max and percentiles ``q`` of the valid pixels of the current rows.

        Percentiles merge the samples' KLL sketches (``GeotiffStats``), so they are
        percentiles of the view's pixels within ``rank_error`` of the result; a
        dataset without sketches falls back to the mean of stored percentiles, with a
        :class:`~taco_gdal.errors.TacoApproximationWarning`.

        Example:
            >>> s = ds.filter_datetime("2024").stats(band=0, q=(2, 98))
            >>> s.percentiles.shape, s.rank_error < 0.01
            ((2,), True)
        """
        fetch = functools.partial(self._fetch, what="stats()")
        return stats_of_view(self._state, band, q, level, fetch, self._column_names)

    def stats_mean(self, band: Bands = None, level: int = 0) -> np.ndarray:
        """Mean of the valid pixels of the current rows, per band: ``stats(...).mean``.

        Example:
            >>> round(float(ds.filter_datetime("2024").stats_mean(band=0)), 2)
            124.75
            >>> ds.stats_mean()  # every band: one here
            array([124.74804688])
        """
        return self.stats(band, (), level).mean

    def stats_std(self, band: Bands = None, level: int = 0) -> np.ndarray:
        """Standard deviation of the valid pixels of the current rows: ``stats(...).std``."""
        return self.stats(band, (), level).std

    def stats_min(self, band: Bands = None, level: int = 0) -> np.ndarray:
        """Smallest pixel value of the current rows, per band: ``stats(...).min``."""
        return self.stats(band, (), level).min

    def stats_max(self, band: Bands = None, level: int = 0) -> np.ndarray:
        """Largest pixel value of the current rows, per band: ``stats(...).max``."""
        return self.stats(band, (), level).max

    def stats_percentile(self, q: float, band: Bands = None, level: int = 0) -> np.ndarray:
        """Percentile ``q`` (0..100) of the valid pixels: ``stats(band, (q,)).percentiles``.

        Raises:
            TacoQueryError: ``q`` outside 0..100, or not 25, 50, 75 or 95 on a
                dataset without sketches.

        Example:
            >>> p50 = ds.stats_percentile(50, band=[0])
            >>> p50.shape, bool(ds.stats_min(0) <= p50[0] <= ds.stats_max(0))
            ((1,), True)
        """
        return self.stats(band, (q,), level).percentiles[..., 0]

    def stats_p25(self, band: Bands = None, level: int = 0) -> np.ndarray:
        """``stats_percentile(25, ...)`` (the reference reader's name)."""
        return self.stats_percentile(25, band, level)

    def stats_p50(self, band: Bands = None, level: int = 0) -> np.ndarray:
        """``stats_percentile(50, ...)`` (the reference reader's name)."""
        return self.stats_percentile(50, band, level)

    def stats_p75(self, band: Bands = None, level: int = 0) -> np.ndarray:
        """``stats_percentile(75, ...)`` (the reference reader's name)."""
        return self.stats_percentile(75, band, level)

    def stats_p95(self, band: Bands = None, level: int = 0) -> np.ndarray:
        """``stats_percentile(95, ...)`` (the reference reader's name)."""
        return self.stats_percentile(95, band, level)

    def stats_median(self, band: Bands = None, level: int = 0) -> np.ndarray:
        """``stats_percentile(50, ...)``."""
        return self.stats_percentile(50, band, level)

    def stats_categorical(self, band: Bands = None, level: int = 0) -> np.ndarray:
        """Class fractions of the current rows, ``(bands, classes)``, pixel-weighted."""
        fetch = functools.partial(self._fetch, what="stats_categorical()")
        return view_stats(self._state, "categorical", band, level, fetch, self._column_names)

    # --- arrays -----------------------------------------------------------------------
    # --- pictures ---------------------------------------------------------------------
    def plot(self, column: str | None = None, ax: Axes | None = None, **kwargs: Any) -> Axes:
        """Footprints of the current rows on lon/lat axes, coloured by ``column``.

        Example:
            >>> ds.filter_datetime("2024").plot(column="stac:time_start")
            <Axes: xlabel='longitude (°)', ylabel='latitude (°)'>
            >>> import matplotlib.pyplot as plt
            >>> plt.close("all")
        """
        return _plots.plot_footprints(self.data, column, ax, **kwargs)

    def explore(self, **kwargs: Any) -> Any:
        """An interactive folium map of the footprints (needs ``folium``).

        Example:
            >>> m = ds.explore(column="cloud_cover")  # shows itself in a notebook
            >>> type(m).__name__
            'Map'
        """
        return _plots.explore(self.data, **kwargs)

    def summary(self) -> _plots.Summary:
        """Rows per level after the filters, rounded extent, time range and SVG map.

        Example:
            >>> summary = ds.filter_bbox(-4, 40, -3, 41).summary()
            >>> summary.rows, summary.extent, summary.time
            ((4,), (-3.692, 40.392, -3.542, 40.452), ('2024-03-01 10:30:00', '2024-03-31 10:30:00'))
        """
        return _plots.summarise(
            self._state, lambda sql: self._fetch(sql, what="summary"), self._column_names
        )
