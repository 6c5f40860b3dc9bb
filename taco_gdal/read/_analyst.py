"""The analyst's side of :class:`~taco_gdal.read.dataset.TacoDataset` (a mixin).

Polygon filters, ``geotiff:stats`` aggregations on the current view,
pandas-like ``len`` / ``head`` / iteration, plots and the footprint map.
Everything works on the dataset's immutable query state.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from taco_gdal.errors import TacoQueryError
from taco_gdal.read.notebook import _plots as _notebook
from taco_gdal.read.spatial._footprints import WGS84
from taco_gdal.read.query.sql import quote_ident

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    from matplotlib.axes import Axes

    from taco_gdal.read.frames._direct import DirectRows
    from taco_gdal.read.frames.dataframe import TacoDataFrame
    from taco_gdal.read.dataset import TacoDataset
    from taco_gdal.read.query.state import QueryState

__all__ = ["AnalystMixin"]

Bands = int | Sequence[int] | None


class AnalystMixin:
    """Methods :class:`TacoDataset` gets for notebook work (see the class for examples)."""

    _state: QueryState

    # provided by TacoDataset
    def _fetch(self, sql: str, what: str) -> pa.Table:  # pragma: no cover - overridden
        raise NotImplementedError

    def _column_names(self, relation: str) -> list[str]:  # pragma: no cover - overridden
        raise NotImplementedError

    def _current_rows(self, what: str) -> DirectRows:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def data(self) -> TacoDataFrame:  # pragma: no cover - overridden
        raise NotImplementedError

    # --- spatial ------------------------------------------------------------------
    def filter_geometry(
        self,
        geometry: Any,
        crs: str = WGS84,
        geometry_col: str = "auto",
        level: int = 0,
    ) -> TacoDataset:
        """Samples whose footprint intersects a shapely geometry (a polygon of interest).

        The geometry is reprojected (densified) from ``crs`` to EPSG:4326 and
        compared with the EPSG:4326 footprints, as in ``filter_bbox``.

        Raises:
            TacoQueryError: not a shapely geometry, empty, or an unknown CRS.

        Example:
            >>> import shapely
            >>> aoi = shapely.box(-3.7, 40.38, -3.6, 40.42)
            >>> ds.filter_geometry(aoi).data.id.tolist()
            ['s000', 's001']
        """
        from taco_gdal.read.spatial._filter import filter_shape
        from taco_gdal.read.dataset import TacoDataset

        return TacoDataset(filter_shape(self._state, geometry, geometry_col, level, crs))

    # --- pandas-like ------------------------------------------------------------
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
        from taco_gdal.read.frames.dataframe import FrameContext, to_frame

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
        for _, row in self.data.iterrows():
            yield row

    def frame(self, internal: bool = False) -> TacoDataFrame:
        """``.data``, with every ``internal:*`` column when ``internal`` is True.

        Example:
            >>> ds.frame(internal=True)["internal:offset"].tolist()
            [196, 857, 1518, 2179]
        """
        from taco_gdal.read.frames.dataframe import FrameContext, to_frame

        rows = self._current_rows(what=".frame()")
        context = FrameContext(self._state, 0)
        return to_frame(
            rows.table,
            context,
            self._state.path,
            internal=internal,
            paths=rows.paths,
            lazy=rows.lazy,
        )

    # --- statistics -----------------------------------------------------------------
    def _stats_kind(self, level: int) -> bool | None:
        """True/False when ``taco:field_schema`` describes ``geotiff:stats`` as categorical."""
        from taco_gdal.format.names import FIELD_SCHEMA_KEY
        from taco_gdal.read.query.stats import STATS_COLUMN

        fields = (self._state.collection.get(FIELD_SCHEMA_KEY) or {}).get(f"level{level}") or []
        for entry in fields:
            if isinstance(entry, (list, tuple)) and len(entry) >= 3 and entry[0] == STATS_COLUMN:
                text = str(entry[2]).lower()
                if "class fractions" in text:
                    return True
                if "min, max" in text:
                    return False
        return None

    def _stat(self, stat: str, band: Bands, level: int) -> np.ndarray:
        from taco_gdal.read.query.stats import aggregate_stats

        state = self._state
        if (
            isinstance(level, bool)
            or not isinstance(level, int)
            or not 0 <= level <= state.max_depth
        ):
            raise TacoQueryError(
                f"level must be 0..{state.max_depth} for {state.path}, got {level!r}"
            )
        source = _notebook.descendants_sql(state, level, self._column_names)
        columns = self._column_names(state.relation(level))
        return aggregate_stats(
            lambda sql: self._fetch(sql, what=f"stats_{stat}()"),
            source,
            columns,
            stat,
            band,
            categorical=self._stats_kind(level),
            where=f"{state.path} level {level}",
        )

    def stats_mean(self, band: Bands = None, level: int = 0) -> np.ndarray:
        """Mean of the valid pixels of the current rows, per band (from ``geotiff:stats``).

        Runs in DuckDB on the current (filtered) view, weighting each sample by
        its valid pixels; see :mod:`taco_gdal.read.query.stats`.

        Example:
            >>> round(float(ds.filter_datetime("2024").stats_mean(band=0)), 2)
            124.75
            >>> ds.stats_mean()  # every band: one here
            array([124.74804688])
        """
        return self._stat("mean", band, level)

    def stats_std(self, band: Bands = None, level: int = 0) -> np.ndarray:
        """Standard deviation of the valid pixels of the current rows, per band (exact)."""
        return self._stat("std", band, level)

    def stats_min(self, band: Bands = None, level: int = 0) -> np.ndarray:
        """Smallest pixel value of the current rows, per band."""
        return self._stat("min", band, level)

    def stats_max(self, band: Bands = None, level: int = 0) -> np.ndarray:
        """Largest pixel value of the current rows, per band."""
        return self._stat("max", band, level)

    def stats_percentile(self, q: int, band: Bands = None, level: int = 0) -> np.ndarray:
        """Percentile ``q`` (25, 50, 75 or 95), the weighted mean of the samples' (approximate).

        Example:
            >>> ds.stats_percentile(50, band=[0])
            array([120.])
        """
        if q not in (25, 50, 75, 95):
            raise TacoQueryError(
                f"stats_percentile(q): geotiff:stats stores q in (25, 50, 75, 95), got {q!r}"
            )
        return self._stat(f"p{q}", band, level)

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
        return self._stat("categorical", band, level)

    # --- pictures ---------------------------------------------------------------------
    def plot(self, column: str | None = None, ax: Axes | None = None, **kwargs: Any) -> Axes:
        """Footprints of the current rows on lon/lat axes, coloured by ``column``.

        Example:
            >>> ds.filter_datetime("2024").plot(column="stac:time_start")
            <Axes: xlabel='longitude (°)', ylabel='latitude (°)'>
            >>> import matplotlib.pyplot as plt
            >>> plt.close("all")
        """
        return _notebook.plot_footprints(self.data, column, ax, **kwargs)

    def explore(self, **kwargs: Any) -> Any:
        """An interactive folium map of the footprints (needs ``folium``).

        Example:
            >>> m = ds.explore(column="cloud_cover")  # shows itself in a notebook
            >>> type(m).__name__
            'Map'
        """
        return _notebook.explore(self.data, **kwargs)

    def summary(self) -> _notebook.Summary:
        """Rows per level after the filters, rounded extent, time range and SVG map.

        Example:
            >>> summary = ds.filter_bbox(-4, 40, -3, 41).summary()
            >>> summary.rows, summary.extent, summary.time
            ((4,), (-3.692, 40.392, -3.542, 40.452), ('2024-03-01 10:30:00', '2024-03-31 10:30:00'))
        """
        return _notebook.summarise(
            self._state, lambda sql: self._fetch(sql, what="summary"), self._column_names
        )
