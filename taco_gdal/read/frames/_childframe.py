"""A FOLDER's children as a frame, without the fixed cost of ``Table.to_pandas``.

A :class:`LevelShape` per level holds what ``to_frame`` gives for *no* rows (so
the frame is ``to_frame``'s by construction) and a converter per column that
takes rows by position.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import geopandas as gpd
import numpy as np
import pandas as pd
import pyarrow as pa

from taco_gdal.format.names import (
    CURRENT_ID,
    FOLDER,
    GDAL_VSI,
    ID,
    LOCAL_META,
    OFFSET,
    PADDING_PREFIX,
    RELATIVE_PATH,
    SIZE,
    SOURCE_FILE,
    TYPE,
)
from taco_gdal.format.vsi import SUBFILE_PREFIX
from taco_gdal.read._types import is_binary
from taco_gdal.read.frames._children import rows_table, with_paths
from taco_gdal.read.frames._geoframe import arrow_frame, footprints_of_rows
from taco_gdal.read.query.sql import gdal_vsi_arrow, is_hidden
from taco_gdal.read.spatial._lazygeom import LazyGeometryArray
from taco_gdal.read.spatial.crs import WGS84, footprint_column

if TYPE_CHECKING:
    from taco_gdal.read.opening.containers.base import VsiRule
    from taco_gdal.read.query.state import LevelTables, QueryState

__all__ = ["LevelShape", "gdal_vsi_python", "level_shape", "rows_frame"]

Kind = Literal["numpy", "extension", "object", "arrow"]
Block = tuple[Any, np.ndarray]

try:  # pandas >= 3: blocks straight into a frame (no per-column inference)
    from pandas.api.internals import create_dataframe_from_blocks as _from_blocks
except ImportError:  # pragma: no cover - pandas 2: the dict constructor
    _from_blocks = None

_LOCK = threading.Lock()
_SHAPES: weakref.WeakKeyDictionary[LevelTables, dict[tuple[int, bool], LevelShape | None]] = (
    weakref.WeakKeyDictionary()
)


@dataclass(frozen=True)
class _Column:
    """How one output column is made from rows of the level table."""

    name: str
    kind: Kind
    source: pa.ChunkedArray
    view: np.ndarray | None  # the whole column as numpy, when that costs no copy
    dtype: Any  # the dtype to_frame gives the column


def _kind(column: pa.ChunkedArray, dtype: Any) -> Kind:
    kind = column.type
    if isinstance(dtype, (pd.StringDtype, pd.ArrowDtype)):
        return "extension"  # to_pandas builds these with the dtype's own __from_arrow__
    if (
        pa.types.is_floating(kind)
        or pa.types.is_duration(kind)
        or (pa.types.is_timestamp(kind) and kind.tz is None)
        or ((pa.types.is_integer(kind) or pa.types.is_boolean(kind)) and column.null_count == 0)
    ):
        return "numpy" if isinstance(dtype, np.dtype) and dtype.kind in "fiubmM" else "arrow"
    textual = pa.types.is_string(kind) or pa.types.is_large_string(kind)
    binary = is_binary(kind)
    nested = pa.types.is_list(kind) or pa.types.is_large_list(kind)
    if (textual or binary or nested) and dtype == np.dtype(object):
        return "object"
    return "arrow"


def _view(column: pa.ChunkedArray, kind: Kind, dtype: Any) -> np.ndarray | None:
    """The column as a numpy view of its one Arrow buffer (None when that would copy)."""
    if kind != "numpy" or column.num_chunks != 1 or column.null_count:
        return None
    if pa.types.is_boolean(column.type):
        return None  # bit-packed: converted per call from the taken rows
    try:
        values = column.chunk(0).to_numpy(zero_copy_only=True)
    except pa.ArrowInvalid:
        return None
    return values if values.dtype == dtype else None


@dataclass(frozen=True)
class LevelShape:
    """The frame ``to_frame`` makes from rows of one level, as converters by row position."""

    level: int
    internal: bool
    columns: pd.Index
    made: tuple[_Column | None, ...]  # None: internal:gdal_vsi, or the footprint column
    index_name: str | None  # internal:current_id when it is the index
    geometry: str | None  # the active geometry column's name
    footprints: str | None  # the stored WKB column its footprints come from
    vsi_dtype: Any
    vsi_inputs: tuple[_Column, ...] | None  # what gdal_vsi_python reads (None: Arrow compute)


def _without_padding(table: pa.Table, rows: np.ndarray) -> tuple[np.ndarray, pa.Array]:
    """``rows`` without padding rows or null ids (looking at these rows' ids only)."""
    taken = pa.array(rows, pa.int64())
    ids = table.column(ID).take(taken).to_pylist()
    keep = [v is not None and not str(v).startswith(PADDING_PREFIX) for v in ids]
    if all(keep):
        return rows, taken
    rows = rows[np.asarray(keep, dtype=bool)]
    return rows, pa.array(rows, pa.int64())


def _template(
    state: QueryState, level: int, internal: bool
) -> tuple[pd.DataFrame, pa.Table] | None:
    """``to_frame`` of no rows of ``level``, and the stored table (None: take ``to_frame``)."""
    table = state.base.table(level)
    names = table.column_names
    if (table.schema.metadata or {}).get(b"pandas") is not None or len(set(names)) != len(names):
        return None
    empty = with_paths(state.base.rule, table.slice(0, 0), f"level {level} of {state.path}")
    return arrow_frame(empty, state, level, state.path, internal=internal), table


def level_shape(state: QueryState, level: int, internal: bool) -> LevelShape | None:
    """The :class:`LevelShape` of ``level`` (cached), or None when ``to_frame`` must convert it."""
    base = state.base
    key = (level, internal)
    with _LOCK:
        known = _SHAPES.setdefault(base, {})
        if key in known:
            return known[key]
    shape = _build_shape(state, level, internal)
    with _LOCK:  # two threads may both build it; either result is the same
        known[key] = shape
    return shape


def _build_shape(state: QueryState, level: int, internal: bool) -> LevelShape | None:
    made = _template(state, level, internal)
    if made is None:
        return None
    template, table = made
    geometry: str | None = None
    if isinstance(template, gpd.GeoDataFrame):
        geometry = str(template.geometry.name)
    columns: list[_Column | None] = []
    for name, dtype in template.dtypes.items():
        if name in (GDAL_VSI, geometry):
            columns.append(None)
            continue
        source = table.column(str(name))
        kind = _kind(source, dtype)
        columns.append(_Column(str(name), kind, source, _view(source, kind, dtype), dtype))
    index_name = template.index.name if template.index.name == CURRENT_ID else None
    shown = [c for c in table.column_names if not is_hidden(c)]
    rule = state.base.rule
    inputs = None
    if _python_ready(rule, table):
        inputs = tuple(_input(table.column(n), n) for n in _vsi_inputs(rule, table))
    return LevelShape(
        level=level,
        internal=internal,
        columns=template.columns,
        made=tuple(columns),
        index_name=index_name,
        geometry=geometry,
        footprints=footprint_column(table.select(shown)) if geometry else None,
        vsi_dtype=template.dtypes[GDAL_VSI],
        vsi_inputs=inputs,
    )


def _input(source: pa.ChunkedArray, name: str) -> _Column:
    """A column the GDAL path is built from (integers as numpy when that costs no copy)."""
    kind: Kind = "numpy" if pa.types.is_integer(source.type) and not source.null_count else "arrow"
    view = _view(source, kind, np.dtype(source.type.to_pandas_dtype())) if kind == "numpy" else None
    return _Column(name, kind, source, view, None)


def _values(column: _Column, rows: np.ndarray, taken: pa.Array) -> list[Any]:
    if column.view is not None:
        values: list[Any] = column.view[rows].tolist()
        return values
    taken_values: list[Any] = column.source.take(taken).to_pylist()
    return taken_values


def _python_ready(rule: VsiRule, table: pa.Table) -> bool:
    """True when :func:`gdal_vsi_python` gives ``gdal_vsi_arrow``'s strings for this table."""
    schema = table.schema

    def has(name: str, test: Callable[[pa.DataType], bool]) -> bool:
        return name in schema.names and test(schema.field(name).type)

    text = pa.types.is_string
    if rule.kind == "stored":
        return has(GDAL_VSI, text)
    if rule.kind == "folder":
        name = RELATIVE_PATH if RELATIVE_PATH in schema.names else ID
        return has(name, text) and has(TYPE, text)
    ready = has(OFFSET, pa.types.is_integer) and has(SIZE, pa.types.is_integer)
    return ready and (rule.kind == "subfile" or has(SOURCE_FILE, text))


def gdal_vsi_python(rule: VsiRule, values: Mapping[str, Sequence[Any]]) -> list[str | None]:
    """:func:`~taco_gdal.read.query.sql.gdal_vsi_arrow` for a few rows, from Python values.

    ``values`` maps the columns the rule reads to one value per row; a null input gives None.
    """
    if rule.kind == "stored":
        return list(values[GDAL_VSI])
    if rule.kind == "folder":
        root = rule.root.rstrip("/") + "/"
        names = values[RELATIVE_PATH] if RELATIVE_PATH in values else values[ID]
        meta = "/" + LOCAL_META
        return [
            None
            if n is None or t is None
            else f"{root}{n.rstrip('/')}{meta if t == FOLDER else ''}"
            for n, t in zip(names, values[TYPE], strict=True)
        ]
    offsets, sizes = values[OFFSET], values[SIZE]
    if rule.kind == "subfile":
        tail = "," + rule.root
        return [
            None if o is None or s is None else f"{SUBFILE_PREFIX}{o}_{s}{tail}"
            for o, s in zip(offsets, sizes, strict=True)
        ]
    base = "," + rule.root.rstrip("/") + "/"
    return [
        None if o is None or s is None or f is None else f"{SUBFILE_PREFIX}{o}_{s}{base}{f}"
        for o, s, f in zip(offsets, sizes, values[SOURCE_FILE], strict=True)
    ]


def _vsi_inputs(rule: VsiRule, table: pa.Table) -> list[str]:
    if rule.kind == "stored":
        return [GDAL_VSI]
    if rule.kind == "folder":
        return [RELATIVE_PATH if RELATIVE_PATH in table.column_names else ID, TYPE]
    return [OFFSET, SIZE] + ([SOURCE_FILE] if rule.kind == "source_file" else [])


def _paths(
    base: LevelTables, shape: LevelShape, rows: np.ndarray, taken: pa.Array, where: str
) -> Any:
    """``internal:gdal_vsi`` of ``rows``, in the dtype ``to_frame`` gives it."""
    rule = base.rule
    if shape.vsi_inputs is not None:
        values = {c.name: _values(c, rows, taken) for c in shape.vsi_inputs}
        # pandas' str dtype stores large_string: made so, the strings are not cast again
        text = pa.large_string() if isinstance(shape.vsi_dtype, pd.StringDtype) else pa.string()
        array = pa.array(gdal_vsi_python(rule, values), text)
    else:
        table = base.table(shape.level)
        inputs = _vsi_inputs(rule, table)
        array = gdal_vsi_arrow(rule, table.select(inputs).take(taken), where)
    return _from_arrow(array, shape.vsi_dtype)


def _from_arrow(array: pa.Array | pa.ChunkedArray, dtype: Any) -> Any:
    if hasattr(dtype, "__from_arrow__"):
        return dtype.__from_arrow__(array)
    return array.to_numpy(zero_copy_only=False)  # pragma: no cover - pandas without str dtype


def _block(values: Any, position: int) -> Block:
    where = np.array([position], dtype=np.intp)
    if isinstance(values, np.ndarray):
        return values.reshape(1, -1), where
    return values, where


def _numpy(column: _Column, rows: np.ndarray, taken: pa.Array) -> np.ndarray:
    if column.view is not None:
        picked: np.ndarray = column.view[rows]
        return picked
    values = np.asarray(column.source.take(taken).to_numpy(zero_copy_only=False))
    return values if values.flags.writeable else values.copy()


def _arrow_columns(table: pa.Table, columns: Sequence[_Column], taken: pa.Array) -> dict[str, Any]:
    """Columns whose pandas form depends on the rows, through ``to_pandas``."""
    if not columns:
        return {}
    frame = table.select([c.name for c in columns]).take(taken).to_pandas()
    out: dict[str, Any] = {}
    for j, column in enumerate(columns):
        values = frame.iloc[:, j].array
        if isinstance(values, pd.arrays.NumpyExtensionArray) or isinstance(values.dtype, np.dtype):
            values = np.asarray(values)  # numpy blocks, as to_pandas makes them
        out[column.name] = values
    return out


def _assemble(arrays: list[Any], columns: pd.Index, index: pd.Index) -> pd.DataFrame:
    if _from_blocks is None:  # pragma: no cover - pandas 2: the dict constructor
        plain = pd.DataFrame(dict(enumerate(arrays)), index=index, copy=False)
        plain.columns = columns
        return plain
    frame: pd.DataFrame = _from_blocks([_block(a, j) for j, a in enumerate(arrays)], index, columns)
    return frame


def rows_frame(
    state: QueryState, level: int, rows: np.ndarray, *, internal: bool, what: str = "frame"
) -> pd.DataFrame:
    """Rows of ``level`` (positions, padding dropped) as ``arrow_frame`` would make them."""
    shape = level_shape(state, level, internal)
    table = state.base.table(level)
    where = f"{what}: level {level} of {state.path}"
    if shape is None:
        taken_table = rows_table(state, level, rows, where)
        return arrow_frame(taken_table, state, level, state.path, internal=internal)
    rows, taken = _without_padding(table, np.array(rows, dtype=np.int64))  # a copy: see index
    later = [c for c in shape.made if c is not None and c.kind == "arrow"]
    converted = _arrow_columns(table, later, taken)
    arrays: list[Any] = []
    for column in shape.made:
        if column is None:
            arrays.append(None)  # internal:gdal_vsi or the footprints, filled below
        elif column.kind == "numpy":
            arrays.append(_numpy(column, rows, taken))
        elif column.kind == "extension":
            arrays.append(column.dtype.__from_arrow__(column.source.take(taken)))
        elif column.kind == "object":
            arrays.append(np.asarray(column.source.take(taken).to_numpy(zero_copy_only=False)))
        else:
            arrays.append(converted[column.name])
    names = list(shape.columns)
    arrays[names.index(GDAL_VSI)] = _paths(state.base, shape, rows, taken, where)
    if shape.index_name is not None:
        index: pd.Index = pd.Index(rows, copy=False, name=shape.index_name)
    else:
        index = pd.RangeIndex(len(rows))
    if shape.geometry is not None:
        return _geo_frame(state, level, shape, arrays, index, rows)
    return _assemble(arrays, shape.columns, index)


def _geo_frame(
    state: QueryState,
    level: int,
    shape: LevelShape,
    arrays: list[Any],
    index: pd.Index,
    rows: np.ndarray,
) -> pd.DataFrame:
    """As ``to_frame``: the plain columns, then the lazy EPSG:4326 footprints as geometry."""
    assert shape.geometry is not None and shape.footprints is not None
    position = list(shape.columns).index(shape.geometry)
    ids = state.base.table(level).select([CURRENT_ID, shape.footprints])
    compute = footprints_of_rows(
        ids.take(pa.array(rows, pa.int64())), shape.footprints, state, level, state.path
    )
    # the footprints are one more block: no insert (and its copy) after the frame is built
    arrays[position] = LazyGeometryArray(compute, len(rows), crs=WGS84)
    plain = _assemble(arrays, shape.columns, index)
    geo: pd.DataFrame = gpd.GeoDataFrame(plain, geometry=shape.geometry, crs=WGS84)
    return geo
