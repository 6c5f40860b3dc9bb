"""TacoDataFrame: a materialised level, as pandas (or geopandas) with ``read()``.

``TacoDataFrame`` is a :class:`pandas.DataFrame`; when the level has a WKB
geometry column (``istac:geometry``, ``stac:centroid``, ``istac:centroid``)
the frame is a :class:`TacoGeoDataFrame`, which is both a ``TacoDataFrame``
and a :class:`geopandas.GeoDataFrame` with one active geometry column,
``geometry``, in EPSG:4326 (the stored WKB columns stay bytes; see
:mod:`taco_gdal.read.frames._geoframe`).  Slicing, filtering and column selection keep
the class (and ``read()``), falling back from geo to plain when no geometry column is left.

Frames pickle (pandas keeps ``_taco``, the :class:`FrameContext`, through
``_metadata``): an unpickled frame, in another process too, still navigates
with ``read()``.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import geopandas as gpd
import numpy as np
import pandas as pd
import pyarrow as pa

from taco_gdal.errors import TacoFormatError, TacoQueryError
from taco_gdal.format.names import CURRENT_ID, GDAL_VSI
from taco_gdal.read._types import is_binary
from taco_gdal.read.frames._geoframe import (
    FOOTPRINT,
    footprint_column,
    footprints_for_rows,
    hidden_internal,
    visible,
)
from taco_gdal.read.frames._lazyarrow import LazyArrowArray
from taco_gdal.read.frames._lazystr import LazyStringArray, RowStrings, string_dtype
from taco_gdal.read.query.sql import is_hidden
from taco_gdal.read.spatial._footprints import WGS84
from taco_gdal.read.spatial._lazygeom import LazyGeometryArray, RowGeometries

if TYPE_CHECKING:
    from collections.abc import Sequence

    from matplotlib.axes import Axes
    from rasterio.io import DatasetReader

    from taco_gdal.read.frames._direct import LazyColumn
    from taco_gdal.read.query.state import QueryState

__all__ = ["FrameContext", "TacoDataFrame", "TacoGeoDataFrame", "to_frame"]


@dataclass(frozen=True)
class FrameContext:
    """Where a frame came from: the dataset's query state and the frame's level.

    It holds the immutable :class:`~taco_gdal.read.query.state.QueryState` (never a
    DuckDB connection), so a frame pickles with it and ``read(key)`` works in
    the process that unpickles it; the level tables travel along (their size
    is the cost of pickling a frame, however few rows it has).
    """

    state: QueryState
    level: int

    @property
    def level_views(self) -> Mapping[int, str]:
        """The current view of each filtered level below 0."""
        return self.state.views

    @property
    def where(self) -> str:
        """The dataset's path, for messages."""
        return self.state.path


class TacoDataFrame(pd.DataFrame):
    """A level of a TACO dataset; ``read(key)`` navigates into a sample.

    Example:
        >>> tdf = taco_gdal.load("dataset.tacozip").data
        >>> tdf.read(0)
        '/vsisubfile/196_622,.../dataset.tacozip'
        >>> taco_gdal.load("tiles.tacozip").data.read("tile001").id.tolist()  # a FOLDER
        ['b02', 'b03', 'b04']
    """

    _metadata: ClassVar[list[str]] = ["_taco"]
    _taco: FrameContext | None = None

    @property
    def _constructor(self) -> Any:
        return TacoDataFrame

    def __setitem__(self, key: Any, value: Any) -> None:
        """Refuses ``id``, ``type`` and ``internal:*`` (see :func:`check_assignment`)."""
        from taco_gdal.read.frames.convert import check_assignment

        check_assignment(key)
        super().__setitem__(key, value)

    @property
    def loc(self) -> Any:  # type: ignore[override]
        """pandas' ``.loc``; assignments to ``id``, ``type`` or ``internal:*`` are refused."""
        from taco_gdal.read.frames.convert import GuardedIndexer

        return GuardedIndexer(super().loc, self, positional=False)

    @property
    def iloc(self) -> Any:  # type: ignore[override]
        """pandas' ``.iloc``; assignments to protected columns are refused."""
        from taco_gdal.read.frames.convert import GuardedIndexer

        return GuardedIndexer(super().iloc, self, positional=True)

    @property
    def at(self) -> Any:  # type: ignore[override]
        """pandas' ``.at``; assignments to protected columns are refused."""
        from taco_gdal.read.frames.convert import GuardedIndexer

        return GuardedIndexer(super().at, self, positional=False)

    @property
    def iat(self) -> Any:  # type: ignore[override]
        """pandas' ``.iat``; assignments to protected columns are refused."""
        from taco_gdal.read.frames.convert import GuardedIndexer

        return GuardedIndexer(super().iat, self, positional=True)

    def to_arrow(self) -> pa.Table:
        """These rows as a ``pyarrow.Table`` (geometry as WKB; see :func:`frame_to_arrow`)."""
        from taco_gdal.read.frames.convert import frame_to_arrow

        return frame_to_arrow(self)

    def to_polars(self) -> Any:
        """These rows as a ``polars.DataFrame`` (needs the ``polars`` extra)."""
        from taco_gdal.read.frames.convert import frame_to_arrow, to_polars

        return to_polars(frame_to_arrow(self))

    def read(self, key: int | str, internal: bool | None = None) -> str | TacoDataFrame:
        """Navigate to a sample by position (``int``) or id (``str``).

        Args:
            key: the row's position or id.
            internal: show the children's ``internal:*`` columns; by default
                children show what this frame shows (``.data`` hides them,
                ``frame(internal=True)`` shows them).

        Returns:
            The GDAL path of a FILE sample (opens with ``rasterio.open`` /
            ``gdal.Open``), or the children of a FOLDER sample as a
            TacoDataFrame, taken from the loaded level (no read) and
            restricted to the children that survive the dataset's active filters.

        Raises:
            TacoNavigationError: no such position or id (the message lists what exists).
        """
        from taco_gdal.read.frames.navigation import read

        return read(self, key, internal)

    def open(self, key: int | str, verify: bool = True) -> AbstractContextManager[DatasetReader]:
        """Open a FILE sample with rasterio under taco_gdal's read profile.

        With ``verify`` (default) and a ``taco_gdal:checksum`` value on the row,
        the sample's bytes are digested first; a mismatch raises
        :class:`~taco_gdal.errors.TacoChecksumError`.

        The profile (``GDAL_DISABLE_READDIR_ON_OPEN=EMPTY_DIR``,
        ``GDAL_INGESTED_BYTES_AT_OPEN`` = the sample's size, retries) applies
        around the open only; a remote sample up to 8 MB costs one GET, and a
        container that changed since its metadata was read raises
        :class:`~taco_gdal.errors.TacoChangedError`.

        Raises:
            TacoNavigationError: no such sample, or the sample is a FOLDER.

        Example:
            >>> with tdf.open(0) as src:
            ...     src.read(1).shape
            (16, 16)
        """
        from taco_gdal.errors import TacoNavigationError
        from taco_gdal.io.sample import open_sample

        target = self.read(key)
        if not isinstance(target, str):
            raise TacoNavigationError(
                f"sample {key!r} is a FOLDER: open() takes a FILE sample; use read({key!r}) "
                f"to get its children"
            )
        return open_sample(target, checksum=self._checksum_of(target) if verify else None)

    def _checksum_of(self, vsi_path: str) -> str | None:
        from taco_gdal.format.names import CHECKSUM, GDAL_VSI

        if CHECKSUM not in self.columns or GDAL_VSI not in self.columns:
            return None
        values = self.loc[self[GDAL_VSI] == vsi_path, CHECKSUM]
        value = values.iloc[0] if len(values) else None
        return value if isinstance(value, str) else None

    def plot_sample(
        self, key: int | str, bands: Sequence[int] | None = None, ax: Axes | None = None
    ) -> Axes:
        """A quick-look of one FILE sample (rasterio, 2-98 percent stretch, id and date title).

        Reads at most 512 pixels a side (decimated) under the read profile.

        Args:
            key: position or id, as in :meth:`read`.
            bands: 1-based bands to show (default: the first three, or one in grey).
            ax: matplotlib axes to draw on (default: a new figure).

        Example:
            >>> tdf.plot_sample(0)
            <Axes: title={'center': 's000  2024-03-01 10:30:00'}>
            >>> import matplotlib.pyplot as plt
            >>> plt.close("all")
        """
        from taco_gdal.read.notebook._plots import plot_sample

        return plot_sample(self, key, bands, ax)

    def _repr_html_(self) -> str | None:
        """pandas' table, with a static SVG map of the footprints beside it (geo frames)."""
        from taco_gdal.read.notebook._plots import frame_html

        table = super()._repr_html_()  # type: ignore[misc]
        return None if table is None else frame_html(self, table)


class TacoGeoDataFrame(TacoDataFrame, gpd.GeoDataFrame):  # type: ignore[misc]
    """A :class:`TacoDataFrame` that is a GeoDataFrame (``geometry``: EPSG:4326 footprints)."""

    _metadata: ClassVar[list[str]] = ["_geometry_column_name", "_taco"]

    @classmethod
    def _geodataframe_constructor_with_fallback(cls, *args: Any, **kwargs: Any) -> Any:
        frame = cls(*args, **kwargs)
        if not (frame.dtypes == "geometry").any():
            return TacoDataFrame(frame)
        return frame

    @property
    def _constructor(self) -> Any:
        return self._geodataframe_constructor_with_fallback

    def __getitem__(self, key: Any) -> Any:
        result = super().__getitem__(key)
        if type(result) is pd.DataFrame:  # geopandas downcasts when no geometry is left
            result.__class__ = TacoDataFrame
            object.__setattr__(result, "_taco", self._taco)
        return result

    def __delitem__(self, key: Any) -> None:  # type: ignore[misc]
        super().__delitem__(key)
        if type(self) is pd.DataFrame:  # pragma: no branch - geopandas downcast self
            self.__class__ = TacoDataFrame  # type: ignore[assignment]


def _binary_as_arrow(kind: pa.DataType) -> pd.ArrowDtype | None:
    """Keep WKB (binary) columns in Arrow: no million Python ``bytes`` objects up front."""
    if is_binary(kind):
        return pd.ArrowDtype(kind)
    return None


def _shown_positions(names: Sequence[str], index: pd.RangeIndex | None) -> list[int]:
    """Positions of the columns :func:`visible` keeps (hidden ones are never converted).

    With ``index``, ``internal:current_id`` is that index and is not converted either.
    """
    return [
        i
        for i, name in enumerate(names)
        if not hidden_internal(name) and (index is None or name != CURRENT_ID)
    ]


def _row_range_index(table: pa.Table) -> pd.RangeIndex | None:
    """``internal:current_id`` as a ``RangeIndex`` when it is ``0..n-1`` (an unfiltered level).

    The index :func:`visible`'s ``set_index`` gives too (pandas recognises the
    range), without converting the column first: at 1M rows an 8 MB int64
    array and the copy of the block it shares.

    Example:
        >>> _row_range_index(pa.table({"internal:current_id": [0, 1, 2]}))
        RangeIndex(start=0, stop=3, step=1, name='internal:current_id')
        >>> _row_range_index(pa.table({"internal:current_id": [0, 2, 3]})) is None
        True
    """
    if table.column_names.count(CURRENT_ID) != 1:
        return None
    column = table.column(CURRENT_ID)
    if column.type != pa.int64() or column.null_count or column.num_chunks > 1:
        return None
    n = len(column)
    if n == 0:
        return None
    ids = column.chunk(0).to_numpy()
    if ids[0] != 0 or ids[-1] != n - 1 or not bool(np.all(ids[1:] > ids[:-1])):
        return None
    return pd.RangeIndex(n, name=CURRENT_ID)


def footprints_of_rows(
    table: pa.Table,
    column: str,
    state: QueryState | None,
    level: int,
    where: str,
    source: LazyColumn | None = None,
) -> RowGeometries:
    """The function a :class:`LazyGeometryArray` calls: footprints of some rows of ``table``.

    ``table`` needs the WKB ``column`` (or ``source`` computes it) and, to
    reuse the level's cached footprints, ``internal:current_id``; a bad value
    raises :class:`TacoFormatError` naming ``where`` when the footprint is first used.
    """

    def compute(rows: np.ndarray | None) -> np.ndarray:
        chosen = table if rows is None else table.take(pa.array(rows, pa.int64()))
        if source is not None and column not in chosen.column_names:
            chosen = chosen.append_column(column, source.compute(rows))
        try:
            return footprints_for_rows(chosen, column, state, level)
        except TacoQueryError as exc:
            raise TacoFormatError(f"{where}: {exc}") from exc

    return compute


def to_frame(
    table: pa.Table,
    context: FrameContext | None,
    where: str = "",
    *,
    internal: bool = True,
    paths: RowStrings | None = None,
    lazy: Sequence[LazyColumn] = (),
) -> TacoDataFrame:
    """Arrow result -> TacoDataFrame / TacoGeoDataFrame (see the module docstring).

    Helper columns are dropped; with a WKB geometry column the frame is a
    GeoDataFrame whose one active column ``geometry`` holds EPSG:4326
    footprints, the stored WKB columns staying as bytes; ``internal:*`` other
    than ``internal:gdal_vsi`` / ``internal:source_file`` are hidden unless
    ``internal`` (``internal:current_id`` becomes the index).  ``paths``, when
    given, computes the ``internal:gdal_vsi`` column ``table`` lacks: it
    becomes the last column, a :class:`LazyStringArray` (paths are built for
    the rows that are looked at).  Each of ``lazy`` (a column ``table`` lacks,
    still in the dataset's file) becomes a :class:`LazyArrowArray` in its
    stored place.
    """
    table = table.drop_columns([c for c in table.column_names if is_hidden(c)])
    lazy = [c for c in lazy if not is_hidden(c.name)]
    extra = pa.schema([pa.field(c.name, c.type) for c in lazy])
    column = footprint_column(pa.unify_schemas([table.schema, extra]).empty_table())
    dtype = None if paths is None else string_dtype()
    if paths is not None and dtype is None:  # strings as Python objects: build them now
        table = table.append_column(GDAL_VSI, paths(None))
    index = None if internal else _row_range_index(table)
    shown = table if internal else table.select(_shown_positions(table.column_names, index))
    plain = shown.to_pandas(types_mapper=_binary_as_arrow)
    if index is not None:
        plain.index = index
    for deferred in lazy:
        if not internal and hidden_internal(deferred.name):
            continue
        values = LazyArrowArray.lazy(deferred.compute, table.num_rows, deferred.type)
        before = [plain.columns.get_loc(n) for n in deferred.before if n in plain.columns]
        place = before[0] if before else len(plain.columns)
        plain.insert(place, deferred.name, pd.Series(values, index=plain.index, copy=False))
    if paths is not None and dtype is not None:
        vsi = LazyStringArray.lazy(paths, table.num_rows, dtype)
        plain[GDAL_VSI] = pd.Series(vsi, index=plain.index, copy=False)
    frame: TacoDataFrame
    if column is None:
        frame = TacoDataFrame(visible(plain, internal))
    else:
        state, level = (context.state, context.level) if context is not None else (None, 0)
        source = next((c for c in lazy if c.name == column), None)
        footprints = LazyGeometryArray(
            footprints_of_rows(table, column, state, level, where, source),
            table.num_rows,
            crs=WGS84,
        )
        name = FOOTPRINT if FOOTPRINT not in plain.columns else f"{FOOTPRINT}_4326"
        plain[name] = gpd.GeoSeries(footprints, index=plain.index)
        frame = TacoGeoDataFrame(  # type: ignore[call-overload]
            visible(plain, internal), geometry=name, crs=WGS84, copy=False
        )
    object.__setattr__(frame, "_taco", context)
    return frame
