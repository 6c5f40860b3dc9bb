"""TacoDataFrame: a materialised level, as pandas (or geopandas) with ``read()``.

A level with a WKB geometry column gives a :class:`TacoGeoDataFrame`.  Frames
pickle with their :class:`FrameContext`, so an unpickled frame still navigates.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, cast

import geopandas as gpd
import numpy as np
import pandas as pd
import pyarrow as pa

from taco_gdal.errors import TacoIOError, TacoNavigationError
from taco_gdal.format.names import CHECKSUM, GDAL_VSI
from taco_gdal.read.frames import navigation
from taco_gdal.read.frames._childframe import rows_frame
from taco_gdal.read.frames._children import child_rows
from taco_gdal.read.frames._geoframe import arrow_frame
from taco_gdal.read.frames._lazystr import RowStrings
from taco_gdal.read.frames.convert import (
    GuardedIndexer,
    check_assignment,
    frame_to_arrow,
    masked_columns,
    to_polars,
)
from taco_gdal.read.frames.vector import vector_frame
from taco_gdal.read.notebook._plots import frame_html, plot_sample

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from rasterio.io import DatasetReader

    from taco_gdal.read.frames._direct import LazyColumn
    from taco_gdal.read.query.state import QueryState

__all__ = [
    "FrameContext",
    "TacoDataFrame",
    "TacoGeoDataFrame",
    "as_taco",
    "child_frame",
    "frame_of_rows",
    "read",
    "to_frame",
]


@dataclass(frozen=True)
class FrameContext:
    """Where a frame came from: the dataset's (immutable, picklable) query state and level."""

    state: QueryState
    level: int

    @property
    def where(self) -> str:
        """The dataset's path, for messages."""
        return self.state.path


def _guarded(name: str, positional: bool) -> Any:
    """pandas' indexer property ``name``, whose assignments to ``id``, ``type`` or
    ``internal:*`` are refused (see :class:`GuardedIndexer`)."""
    indexer = getattr(pd.DataFrame, name).fget
    return property(lambda frame: GuardedIndexer(indexer(frame), frame, positional))


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
        masked = masked_columns(self, key, value)
        check_assignment(key if masked is None else masked)
        super().__setitem__(key, value)

    loc = _guarded("loc", positional=False)
    iloc = _guarded("iloc", positional=True)
    at = _guarded("at", positional=False)
    iat = _guarded("iat", positional=True)

    def to_arrow(self) -> pa.Table:
        """These rows as a ``pyarrow.Table`` (geometry as WKB; see :func:`frame_to_arrow`)."""
        return frame_to_arrow(self)

    def to_polars(self) -> Any:
        """These rows as a ``polars.DataFrame`` (needs the ``polars`` extra)."""
        return to_polars(frame_to_arrow(self))

    def read(self, key: int | str, internal: bool | None = None) -> str | TacoDataFrame:
        """Navigate to a sample by position (``int``) or id (``str``).

        Args:
            key: the row's position or id.
            internal: show the children's ``internal:*`` columns (default: as this frame).

        Returns:
            The GDAL path of a FILE sample, or the children of a FOLDER sample
            that survive the dataset's filters, as a TacoDataFrame.

        Raises:
            TacoNavigationError: no such position or id (the message lists what exists).
        """
        return read(self, key, internal)

    def open(self, key: int | str, verify: bool = True) -> AbstractContextManager[DatasetReader]:
        """Open a FILE sample with rasterio under taco_gdal's read profile.

        With ``verify`` and a ``taco_gdal:checksum`` on the row, the bytes are digested
        first (``TacoChecksumError``); a container changed since load raises
        ``TacoChangedError``.

        Raises:
            TacoNavigationError: no such sample, or the sample is a FOLDER.

        Example:
            >>> with tdf.open(0) as src:
            ...     src.read(1).shape
            (16, 16)
        """
        from taco_gdal.io.sample import open_sample

        target = self.read(key)
        if not isinstance(target, str):
            raise TacoNavigationError(
                f"sample {key!r} is a FOLDER: open() takes a FILE sample; use read({key!r}) "
                f"to get its children"
            )
        return open_sample(target, checksum=self._checksum_of(target) if verify else None)

    def _checksum_of(self, vsi_path: str) -> str | None:
        if CHECKSUM not in self.columns or GDAL_VSI not in self.columns:
            return None
        values = self.loc[self[GDAL_VSI] == vsi_path, CHECKSUM]
        value = values.iloc[0] if len(values) else None
        return value if isinstance(value, str) else None

    def plot_sample(
        self, key: int | str, bands: Sequence[int] | None = None, ax: Axes | None = None
    ) -> Axes:
        """A quick-look of one FILE sample (at most 512 pixels a side, 2-98 percent stretch).

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
        position = navigation.row_position(self, key)
        return plot_sample(self, key, position, self.read(position), bands, ax)

    def _repr_html_(self) -> str | None:
        """pandas' table, with a static SVG map of the footprints beside it (geo frames)."""
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

    def to_file(self, filename: Any, driver: str | None = None, **kwargs: Any) -> None:
        """geopandas' ``to_file``, with WKB, arrays and objects written as text (see
        :func:`taco_gdal.read.frames.vector.vector_frame`).

        Raises:
            TacoIOError: the file cannot be written (the message names it).

        Example:
            >>> ds.data.to_file("tiles.geojson")  # "stac:tensor_shape": "[1, 16, 16]"
        """
        try:
            vector_frame(self).to_file(filename, driver=driver, **kwargs)
        except (OSError, RuntimeError, ValueError) as exc:
            raise TacoIOError(
                f"{filename}: expected to write a vector file (driver {driver or 'by suffix'}), "
                f"failed: {exc}"
            ) from exc

    def to_geo_dict(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """geopandas' ``to_geo_dict`` (and ``__geo_interface__``) with values as
        :meth:`to_file` writes them and times as text, so ``json.dumps`` accepts it."""
        return dict(vector_frame(self, times_as_text=True).to_geo_dict(*args, **kwargs))

    def explore(self, *args: Any, **kwargs: Any) -> Any:
        """geopandas' ``explore`` (needs ``folium`` and ``mapclassify``), WKB and arrays as text.

        Example:
            >>> m = ds.data.explore(column="cloud_cover")
            >>> type(m).__name__
            'Map'
        """
        return vector_frame(self).explore(*args, **kwargs)

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


def as_taco(frame: pd.DataFrame, context: FrameContext | None) -> TacoDataFrame:
    """``frame`` as a TacoDataFrame, in place (only the class changes; no copy)."""
    frame.__class__ = TacoGeoDataFrame if isinstance(frame, gpd.GeoDataFrame) else TacoDataFrame
    object.__setattr__(frame, "_taco", context)
    return cast("TacoDataFrame", frame)


def to_frame(
    table: pa.Table,
    context: FrameContext | None,
    where: str = "",
    *,
    internal: bool = True,
    paths: RowStrings | None = None,
    lazy: Sequence[LazyColumn] = (),
) -> TacoDataFrame:
    """Arrow result -> TacoDataFrame / TacoGeoDataFrame (see :func:`arrow_frame`).

    Example:
        >>> to_frame(pa.table({"id": ["a"], "type": ["FILE"]}), None).id.tolist()
        ['a']
    """
    state, level = (context.state, context.level) if context is not None else (None, 0)
    frame = arrow_frame(table, state, level, where, internal=internal, paths=paths, lazy=lazy)
    return as_taco(frame, context)


def frame_of_rows(
    state: QueryState, level: int, rows: np.ndarray, *, internal: bool, what: str = "frame"
) -> TacoDataFrame:
    """Rows of ``level`` (positions, padding dropped) as ``to_frame`` would make them.

    Example:
        >>> frame = frame_of_rows(tiles.state, 1, np.array([0, 1]), internal=False)
        >>> frame.id.tolist(), frame.index.tolist()
        (['b02', 'b03'], [0, 1])
    """
    frame = rows_frame(state, level, rows, internal=internal, what=what)
    return as_taco(frame, FrameContext(state, level))


def child_frame(
    state: QueryState, level: int, parent: int, *, internal: bool, what: str
) -> TacoDataFrame:
    """The children of row ``parent`` of level ``level - 1`` that survive ``state``, as a frame.

    Example:
        >>> child_frame(tiles.state, 1, 0, internal=False, what="read(0)").id.tolist()
        ['b02', 'b03', 'b04']
    """
    rows = child_rows(state, level, parent)
    return frame_of_rows(state, level, rows, internal=internal, what=what)


def read(frame: TacoDataFrame, key: int | str, internal: bool | None = None) -> str | TacoDataFrame:
    """See :meth:`TacoDataFrame.read`."""
    target = navigation.locate(frame, key, internal)
    if isinstance(target, str):
        return target
    state, level = target.state, target.level
    if target.parent is not None:
        return child_frame(state, level, target.parent, internal=target.internal, what=target.what)
    table = navigation.meta_children(target)
    return to_frame(table, FrameContext(state, level), state.path, internal=target.internal)
