"""A large level's kept columns are decoded from their column chunks alone, read into memory.

:func:`~taco_gdal.read.opening.containers._chunks.chunk_ranges` must cover every byte
Arrow reads for the wanted columns, whatever the writer's options: the bytes
outside the ranges are filled with ``0xFF`` here, so a range that misses a
page header, a dictionary page or the footer fails the decode or changes the
values.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from taco_gdal.errors import TacoFormatError
from taco_gdal.io.vsi import VSIFile
from taco_gdal.read.opening.containers import _parse
from taco_gdal.read.opening.containers._chunks import chunk_ranges, read_columns

PREFIX = 1000
"""Bytes before the Parquet file, as a level sits inside a ZIP."""


def _table(rows: int) -> pa.Table:
    return pa.table(
        {
            "id": [f"s{i:06d}" for i in range(rows)],
            "type": ["FILE"] * rows,
            "cloud": [i / 7 for i in range(rows)],
            "tile": [i % 13 for i in range(rows)],
            "stac:centroid": [bytes([1, i % 256]) * 10 for i in range(rows)],
            "note": [None if i % 5 else "x" * (i % 50) for i in range(rows)],
        }
    )


WRITERS: dict[str, dict[str, Any]] = {
    "zstd, dictionary, many row groups": {"compression": "zstd", "row_group_size": 700},
    "no compression": {"compression": "none", "row_group_size": 1000},
    "no dictionary": {"use_dictionary": False, "row_group_size": 999},
    "data page v2, snappy": {"data_page_version": "2.0", "compression": "snappy"},
    "small pages": {"data_page_size": 512, "row_group_size": 1500},
    "no statistics, gzip": {"write_statistics": False, "compression": "gzip"},
}


def _parquet(options: dict[str, Any], rows: int = 4000) -> bytes:
    sink = io.BytesIO()
    pq.write_table(_table(rows), sink, **options)
    return sink.getvalue()


@pytest.mark.parametrize("writer", list(WRITERS))
@pytest.mark.parametrize("kept", [["id", "type", "cloud", "tile", "note"], ["tile"], ["note"]])
def test_the_ranges_hold_every_byte_the_kept_columns_need(writer: str, kept: list[str]) -> None:
    data = _parquet(WRITERS[writer])
    metadata = pq.ParquetFile(io.BytesIO(data)).metadata
    ranges = chunk_ranges(metadata, kept, len(data))
    only = bytearray(b"\xff" * len(data))
    for start, end in ranges:
        only[start:end] = data[start:end]
    decoded = pq.ParquetFile(pa.BufferReader(pa.py_buffer(bytes(only)))).read(columns=kept)
    assert decoded.equals(pq.read_table(io.BytesIO(data), columns=kept))
    skipped = len(data) - sum(end - start for start, end in ranges)
    assert skipped > 0  # the WKB column's chunks are never read


@pytest.mark.parametrize("writer", list(WRITERS))
def test_a_streamed_level_decodes_from_its_chunks(tmp_path: Path, writer: str) -> None:
    data = _parquet(WRITERS[writer])
    path = tmp_path / "container.bin"
    path.write_bytes(b"\0" * PREFIX + data + b"\0" * 50)
    kept = ["id", "type", "cloud", "tile", "note"]
    expected = pq.read_table(io.BytesIO(data), columns=kept)
    with VSIFile(str(path)) as f:
        level = _parse.StreamedLevel(f, PREFIX, len(data))
        parquet = pq.ParquetFile(level.open())
        decoded = _parse._decode_kept(level, parquet, kept, "test level")  # None: the slow path
        assert decoded is not None and decoded.equals(expected)
        table, deferred = _parse.parse_level_deferring(level, "test level")
    assert table.equals(expected)
    assert deferred is not None and deferred.names == ("stac:centroid",)


def test_a_truncated_level_names_the_missing_bytes(tmp_path: Path) -> None:
    data = _parquet(WRITERS["no compression"])
    metadata = pq.ParquetFile(io.BytesIO(data)).metadata
    path = tmp_path / "short.bin"
    path.write_bytes(data[: len(data) // 2])
    with VSIFile(str(path)) as f, pytest.raises(TacoFormatError, match="truncated file"):
        read_columns(f, 0, len(data), metadata, ["tile"], "short level")
