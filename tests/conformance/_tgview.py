"""Bring taco_gdal's reading into the canonical view of ``_refdump``.

taco_gdal's ``TacoDataFrame`` is a pandas (or geopandas) frame: its active
``geometry`` column (EPSG:4326 footprints derived from a stored WKB column) has
no counterpart in the reference reader and is left out; stored WKB columns stay
bytes, list columns numpy arrays, timestamps
``pd.Timestamp``.  ``frame_rows`` turns those back into the plain Python values
pyarrow's ``to_pylist`` gives for the same Parquet column (WKB bytes,
lists, ``datetime``), so both readers meet in one form.  Sample bytes are read
through GDAL (``VSIFOpenL``), the way every taco_gdal user reads them.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import pathlib
import warnings
from dataclasses import dataclass
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from taco_gdal.io.vsi import read_all
from tests.conformance import _refdump

__all__ = ["TgReading", "dump", "frame_rows", "gdal_bytes", "level_rows", "load_view"]


def _plain(value: Any) -> Any:
    if value is None or value is pd.NaT or value is pd.NA:
        return None
    if isinstance(value, shapely.Geometry):
        return shapely.to_wkb(value)
    if isinstance(value, pd.Timestamp):
        return value.to_pydatetime()
    if isinstance(value, np.datetime64):
        return None if np.isnat(value) else pd.Timestamp(value).to_pydatetime()
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dt.datetime | bytes | str | int | float | bool):
        return value
    return value


def frame_rows(frame: Any) -> tuple[list[str], list[dict[str, Any]]]:
    """Column names and rows (plain Python values) of a taco_gdal TacoDataFrame."""
    if not isinstance(frame, pd.DataFrame):
        return _refdump.arrow_frame_rows(frame)
    if isinstance(frame, gpd.GeoDataFrame):
        # The active geometry is taco_gdal's EPSG:4326 view of a stored WKB column
        # (issue 12, requirement 3); the stored columns stay as bytes, so the
        # comparison with the reference reader leaves the derived column out.
        frame = pd.DataFrame(frame).drop(columns=[frame.geometry.name])
    names = [str(c) for c in frame.columns]
    rows = [
        {name: _plain(value) for name, value in zip(names, record, strict=True)}
        for record in frame.itertuples(index=False, name=None)
    ]
    return names, rows


def gdal_bytes(path: str) -> bytes:
    """All bytes of a GDAL path (``/vsisubfile/...``, a local path, ...), via VSIFOpenL."""
    return read_all(path)


def dump(ds: Any, filters: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """``_refdump.dump`` for a taco_gdal TacoDataset (bytes read through GDAL)."""
    return _refdump.dump(ds, gdal_bytes, filters, strict=True, frame_rows=frame_rows)


def level_rows(ds: Any, level: int) -> list[dict[str, Any]]:
    """The consolidated rows of ``level`` (``TacoDataset.to_arrow``), with their bytes.

    These come from ``METADATA/levelK.parquet`` (through taco_gdal's level
    views), not from ``__meta__`` navigation, so comparing them with the tree
    checks the consolidated offsets.  Each row: ``id``, ``type``, ``values``
    (user columns) and, for FILE rows,
    ``sha256``/``size`` of the bytes behind ``internal:gdal_vsi``: the same
    shape as ``_refdump.consolidated_from_tree`` gives from navigation.
    """
    table = ds.to_arrow(level)  # exact Arrow values, no pandas in between
    names, rows = table.column_names, table.to_pylist()
    user = [c for c in names if not c.startswith("internal:") and c not in ("id", "type")]
    out = []
    for row in rows:
        if str(row["id"]).startswith(_refdump.PADDING_PREFIX):
            continue
        item: dict[str, Any] = {
            "id": row["id"],
            "type": row["type"],
            "values": {c: _refdump.jsonable(row[c]) for c in user},
        }
        if row["type"] == "FILE":
            data = gdal_bytes(row[_refdump.GDAL_VSI])
            item["sha256"] = hashlib.sha256(data).hexdigest()
            item["size"] = len(data)
        out.append(item)
    return out


@dataclass(frozen=True)
class TgReading:
    """What taco_gdal showed of one dataset, and the warnings it raised meanwhile."""

    view: dict[str, Any]
    levels: list[list[dict[str, Any]]]
    """Consolidated rows of levels 0..depth (``level_rows``)."""
    warnings: list[warnings.WarningMessage]


def load_view(path: pathlib.Path, filters: list[dict[str, Any]] | None) -> TgReading:
    """Load ``path`` with taco_gdal, dump its view and consolidated levels, catch warnings."""
    from taco_gdal.read import load

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = load(path)
        try:
            view = dump(ds, filters)
            depth = len(view["columns"]) - 1
            levels = [level_rows(ds, k) for k in range(depth + 1)]
        finally:
            ds.close()
    return TgReading(view, levels, list(caught))
