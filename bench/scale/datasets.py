"""Metadata-only TACO ZIPs for the scaling table, written with taco_gdal's ZipWriter.

Two shapes, generated column-wise with numpy (no ``Sample`` objects, so 10M
rows take seconds, not hours):

* ``flat(n)``: ``n`` FILE samples at level 0 with ISTAC footprints:
  ``istac:geometry`` a 1 km square polygon in the UTM zone of the sample
  (EPSG:32629..32632, named in ``istac:crs``), ``istac:centroid`` its centre in
  EPSG:4326, ``istac:time_start`` / ``istac:time_end`` over three years, plus
  ``cloud_cover`` (double), ``split`` (string) and ``tile`` (int64).
* ``cascade(n)``: ``n // 4`` FOLDER samples at level 0, each with the FILE
  children ``q0`` .. ``q3`` at level 1 (``n`` rows), for navigation; child
  ``qj`` has ``cloud_cover`` ``10 j`` and ``istac:time_start`` 2020-01-01 + j days.

Rows point at a few tiny GeoTIFF members (FOLDER rows at one shared
``__meta__`` that lists ``q0`` .. ``q3``), so the archive is a few megabytes
more than its parquet.  The ZIP is written by the lower layer of taco_gdal's
writer (:class:`taco_gdal.write.zipstream.ZipWriter`): TACO_HEADER, the DATA
members (their offsets are measured as they are written), the level parquet
files (written in 500k-row slices, 64k-row groups, zstd, as the writers do)
and COLLECTION.json; then the TACO_HEADER entries.  Both readers open these
files; the model layer is not involved, which is what makes 10M affordable.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import rasterio
from pyproj import Transformer
from rasterio.transform import from_origin

from taco_gdal.format.header import HeaderEntry
from taco_gdal.format.names import (
    COLLECTION_FILE,
    CURRENT_ID,
    DATA_DIR,
    FIELD_SCHEMA_KEY,
    FILE,
    FOLDER,
    ID,
    ISTAC_CENTROID,
    ISTAC_CRS,
    ISTAC_GEOMETRY,
    ISTAC_TIME_START,
    LOCAL_META,
    OFFSET,
    PARENT_ID,
    PIT_SCHEMA_KEY,
    SIZE,
    TACO_VERSION,
    TYPE,
    level_member,
)
from taco_gdal.write.zipstream import ZipWriter

__all__ = ["CACHE", "cascade", "flat", "parquet_bytes"]

CACHE = Path(tempfile.gettempdir()) / "taco_gdal_bench_scale"
ISTAC_TIME_END = "istac:time_end"
ZONES = (29, 30, 31, 32)
START_US = int(np.datetime64("2020-01-01T00:00:00", "us").astype(np.int64))
SPAN_US = 3 * 365 * 86_400 * 1_000_000
SLICE = 500_000
ROW_GROUP = 65_536
CHILD_IDS = ("q0", "q1", "q2", "q3")
_BLOBS = 16

_POINT = np.dtype([("order", "u1"), ("kind", "<u4"), ("xy", "<f8", (2,))])
_POLYGON = np.dtype(
    [("order", "u1"), ("kind", "<u4"), ("rings", "<u4"), ("points", "<u4"), ("xy", "<f8", (10,))]
)


def _wkb(records: np.ndarray) -> pa.Array:
    """A binary Arrow array whose values are the fixed-size packed ``records``."""
    size = records.dtype.itemsize
    offsets = np.arange(0, (len(records) + 1) * size, size, dtype=np.int32)
    return pa.Array.from_buffers(
        pa.binary(), len(records), [None, pa.py_buffer(offsets), pa.py_buffer(records.tobytes())]
    )


def _points(lon: np.ndarray, lat: np.ndarray) -> pa.Array:
    records = np.zeros(len(lon), _POINT)
    records["order"], records["kind"] = 1, 1
    records["xy"][:, 0], records["xy"][:, 1] = lon, lat
    return _wkb(records)


def _squares(x: np.ndarray, y: np.ndarray, half: float = 500.0) -> pa.Array:
    records = np.zeros(len(x), _POLYGON)
    records["order"], records["kind"], records["rings"], records["points"] = 1, 3, 1, 5
    corners = ((-1, -1), (1, -1), (1, 1), (-1, 1), (-1, -1))
    for k, (dx, dy) in enumerate(corners):
        records["xy"][:, 2 * k] = x + dx * half
        records["xy"][:, 2 * k + 1] = y + dy * half
    return _wkb(records)


def _footprints(rng: np.random.Generator, n: int) -> dict[str, pa.Array]:
    zone_index = rng.integers(0, len(ZONES), n)
    zones = np.asarray(ZONES)[zone_index]
    lon = (zones - 31) * 6.0 + 3.0 + rng.uniform(-2.9, 2.9, n)
    lat = rng.uniform(30.0, 60.0, n)
    x, y = np.empty(n), np.empty(n)
    for zone in ZONES:
        pick = zones == zone
        to_utm = Transformer.from_crs("EPSG:4326", f"EPSG:326{zone}", always_xy=True)
        x[pick], y[pick] = to_utm.transform(lon[pick], lat[pick])
    crs = pa.DictionaryArray.from_arrays(
        pa.array(zone_index.astype(np.int32)), pa.array([f"EPSG:326{z}" for z in ZONES])
    ).cast(pa.string())
    start = START_US + rng.integers(0, SPAN_US, n)
    return {
        ISTAC_CRS: crs,
        ISTAC_GEOMETRY: _squares(x, y),
        ISTAC_CENTROID: _points(lon, lat),
        ISTAC_TIME_START: pa.array(start, pa.int64()).cast(pa.timestamp("us")),
        ISTAC_TIME_END: pa.array(start + 600_000_000, pa.int64()).cast(pa.timestamp("us")),
    }


def _pointers(positions: np.ndarray, blobs: np.ndarray) -> dict[str, pa.Array]:
    pick = blobs[positions % len(blobs)]
    return {OFFSET: pa.array(pick[:, 0]), SIZE: pa.array(pick[:, 1])}


def _flat_slice(start: int, n: int, blobs: np.ndarray) -> pa.Table:
    rng = np.random.default_rng(start)
    rows = np.arange(start, start + n, dtype=np.int64)
    columns: dict[str, Any] = {
        ID: pa.array(np.char.add("s", rows.astype("U10"))),
        TYPE: pa.array(np.full(n, FILE, dtype=object), pa.string()),
        "cloud_cover": pa.array(rng.uniform(0, 100, n)),
        "split": pa.array(np.asarray(["train", "test", "validation"], dtype=object)[rows % 3]),
        "tile": pa.array(rows),
        **_footprints(rng, n),
        CURRENT_ID: pa.array(rows),
        PARENT_ID: pa.array(rows),
        **_pointers(rows, blobs),
    }
    return pa.table(columns)


def _folder_slice(start: int, n: int, meta: np.ndarray) -> pa.Table:
    rng = np.random.default_rng(start)
    rows = np.arange(start, start + n, dtype=np.int64)
    return pa.table(
        {
            ID: pa.array(np.char.add("f", rows.astype("U10"))),
            TYPE: pa.array(np.full(n, FOLDER, dtype=object), pa.string()),
            "cloud_cover": pa.array(rng.uniform(0, 100, n)),
            CURRENT_ID: pa.array(rows),
            PARENT_ID: pa.array(rows),
            **_pointers(rows, meta),
        }
    )


def _child_slice(start: int, n: int, blobs: np.ndarray) -> pa.Table:
    """Level-1 rows; child ``j`` of every FOLDER equals row ``j`` of the shared ``__meta__``."""
    rows = np.arange(start, start + n, dtype=np.int64)
    child = rows % len(CHILD_IDS)
    names = np.asarray(CHILD_IDS, dtype=object)
    return pa.table(
        {
            ID: pa.array(names[child], pa.string()),
            TYPE: pa.array(np.full(n, FILE, dtype=object), pa.string()),
            "cloud_cover": pa.array(child * 10.0),
            ISTAC_TIME_START: pa.array(START_US + child * 86_400_000_000, pa.int64()).cast(
                pa.timestamp("us")
            ),
            CURRENT_ID: pa.array(rows),
            PARENT_ID: pa.array(rows // len(CHILD_IDS)),
            **_pointers(child, blobs),
        }
    )


def _tiny_tif(path: Path, index: int) -> Path:
    profile = {
        "driver": "GTiff",
        "width": 16,
        "height": 16,
        "count": 1,
        "dtype": "uint8",
        "crs": "EPSG:4326",
        "transform": from_origin(-3.7 + 0.01 * index, 40.4, 0.001, 0.001),
    }
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(np.full((1, 16, 16), index, dtype=np.uint8))
    return path


def _write_parquet(path: Path, slices: Iterator[pa.Table]) -> pa.Schema:
    writer: pq.ParquetWriter | None = None
    schema: pa.Schema | None = None
    try:
        for table in slices:
            if writer is None:
                schema = table.schema
                writer = pq.ParquetWriter(path, schema, compression="zstd")
            writer.write_table(table, row_group_size=ROW_GROUP)
    finally:
        if writer is not None:
            writer.close()
    assert schema is not None
    return schema


def _slices(rows: int) -> Iterator[tuple[int, int]]:
    for start in range(0, rows, SLICE):
        yield start, min(SLICE, rows - start)


def _collection(name: str, schemas: list[pa.Schema], rows: list[int]) -> dict[str, Any]:
    hierarchy: dict[str, Any] = {}
    if len(rows) > 1:
        hierarchy["1"] = [{"n": rows[1], "type": [FILE] * 4, "id": list(CHILD_IDS)}]
    return {
        "id": name,
        "dataset_version": "1.0.0",
        "description": "metadata-only scaling benchmark",
        "licenses": ["CC-BY-4.0"],
        "providers": [{"name": "bench", "roles": None, "url": None, "links": None}],
        "tasks": ["classification"],
        "taco_version": TACO_VERSION,
        "title": None,
        "curators": None,
        "keywords": None,
        "extent": {
            "spatial": [-15.0, 30.0, 15.0, 60.0],
            "temporal": ["2020-01-01T00:00:00Z", "2023-01-01T00:00:00Z"],
        },
        PIT_SCHEMA_KEY: {
            "root": {"n": rows[0], "type": FILE if len(rows) == 1 else FOLDER},
            "hierarchy": hierarchy,
        },
        FIELD_SCHEMA_KEY: {
            f"level{k}": [[f.name, str(f.type).lower(), ""] for f in schema]
            for k, schema in enumerate(schemas)
        },
    }


def _build(name: str, rows: int, shape: str, folder: Path) -> Path:
    target = folder / f"{name}.tacozip"
    if target.exists():
        return target
    work = folder / f"{name}.work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    partial = work / "out.tacozip"
    with partial.open("wb") as out:
        zw = ZipWriter(out)
        zw.add_taco_header()
        blobs = np.array(
            [
                (info.data_offset, info.size)
                for info in (
                    zw.add_file(f"{DATA_DIR}/t{i:02d}.tif", str(_tiny_tif(work / f"t{i}.tif", i)))
                    for i in range(_BLOBS)
                )
            ],
            dtype=np.int64,
        )
        levels: list[Iterator[pa.Table]]
        counts: list[int]
        if shape == "flat":
            levels = [(_flat_slice(s, k, blobs) for s, k in _slices(rows))]
            counts = [rows]
        else:
            children = _child_slice(0, len(CHILD_IDS), blobs)
            buffer = pa.BufferOutputStream()
            pq.write_table(children.drop_columns([CURRENT_ID, PARENT_ID]), buffer)
            meta_info = zw.add_bytes(f"{DATA_DIR}/shared/{LOCAL_META}", buffer.getvalue())
            meta = np.array([(meta_info.data_offset, meta_info.size)], dtype=np.int64)
            parents = rows // len(CHILD_IDS)
            levels = [
                (_folder_slice(s, k, meta) for s, k in _slices(parents)),
                (_child_slice(s, k, blobs) for s, k in _slices(parents * len(CHILD_IDS))),
            ]
            counts = [parents, parents * len(CHILD_IDS)]
        entries, schemas = [], []
        for k, slices in enumerate(levels):
            path = work / f"level{k}.parquet"
            schemas.append(_write_parquet(path, slices))
            info = zw.add_file(level_member(k), str(path))
            entries.append(HeaderEntry(info.data_offset, info.size))
            path.unlink()
        text = json.dumps(_collection(name, schemas, counts), indent=2).encode()
        info = zw.add_bytes(COLLECTION_FILE, text)
        entries.append(HeaderEntry(info.data_offset, info.size))
        zw.set_header_entries(entries)
        zw.close()
    partial.rename(target)
    shutil.rmtree(work)
    return target


def flat(rows: int, folder: Path = CACHE) -> Path:
    """The level-0 ISTAC dataset of ``rows`` samples (generated once in ``folder``, then reused).

    Example:
        >>> flat(1000).name  # doctest: +SKIP
        'flat_1000.tacozip'
    """
    return _build(f"flat_{rows}", rows, "flat", folder)


def cascade(rows: int, folder: Path = CACHE) -> Path:
    """``rows // 4`` FOLDERs of 4 FILEs each (generated once in ``folder``, then reused)."""
    return _build(f"cascade_v2_{rows}", rows, "cascade", folder)


def parquet_bytes(path: Path) -> int:
    """Bytes of the level parquet members of a TACO ZIP (what the RSS target is relative to)."""
    import zipfile

    with zipfile.ZipFile(path) as archive:
        return sum(
            info.file_size
            for info in archive.infolist()
            if info.filename.startswith("METADATA/") and info.filename.endswith(".parquet")
        )
