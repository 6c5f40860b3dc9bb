"""Large levels: decoded a column group at a time, and from the file rather than a copy.

The thresholds (48 MiB of columns, 32 MiB of parquet) are far above test data,
so these tests pass small ones to the same functions ``load`` calls.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from taco_gdal.errors import TacoFormatError
from taco_gdal.format.header import HeaderEntry
from taco_gdal.io.vsi import VSIFile, read_all
from taco_gdal.read.opening.containers._parse import (
    StreamedLevel,
    column_groups,
    decode_parquet,
    parse_level,
    parse_level_file_deferring,
    parse_metadata_deferring,
    read_entries,
)
from tests.support.datasets import write_dataset


def _parquet(table: pa.Table, row_group_size: int = 50) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, row_group_size=row_group_size)
    return sink.getvalue()


def _mixed(n: int = 400) -> pa.Table:
    rng = np.random.default_rng(7)
    table = pa.table(
        {
            "id": pa.array([f"s{i}" for i in range(n)]),
            "type": pa.array(["FILE"] * n),
            "cloud": pa.array(rng.uniform(0, 100, n)),
            "wkb": pa.array([bytes(rng.integers(0, 255, 93, dtype=np.uint8)) for _ in range(n)]),
            "maybe": pa.array([None if i % 7 == 0 else i for i in range(n)], pa.int32()),
            "when": pa.array(np.arange(n, dtype=np.int64) * 1_000_000, pa.timestamp("us")),
            "tags": pa.array([[f"t{i % 3}", "x"] for i in range(n)]),
            "nested": pa.array([{"a": i, "b": str(i)} for i in range(n)]),
        }
    )
    return table.replace_schema_metadata({b"taco": b"kept"})


def test_groups_cover_every_column_once_in_schema_order() -> None:
    parquet = pq.ParquetFile(pa.BufferReader(_parquet(_mixed())))
    groups = column_groups(parquet, budget=1)
    names = parquet.schema_arrow.names
    assert len(groups) > 1
    assert sorted(name for group in groups for name in group) == sorted(names)
    for group in groups:
        assert group == sorted(group, key=names.index)
    assert column_groups(parquet) == [names]  # a small table is one group


def test_grouped_decode_equals_one_read() -> None:
    parquet = pq.ParquetFile(pa.BufferReader(_parquet(_mixed())))
    assert parquet.num_row_groups > 1
    grouped = decode_parquet(parquet, budget=1)
    whole = parquet.read()
    assert grouped.equals(whole, check_metadata=True)
    assert grouped.schema.metadata[b"taco"] == b"kept"
    assert all(column.num_chunks == 1 for column in grouped.columns)


def test_duplicate_names_still_fail_with_a_taco_error() -> None:
    table = pa.Table.from_arrays([pa.array(["a"]), pa.array(["FILE"]), pa.array([1])],
                                 names=["id", "type", "id"])  # fmt: skip
    data = _parquet(table)
    assert decode_parquet(pq.ParquetFile(pa.BufferReader(data)), budget=1).num_columns == 3
    with pytest.raises(TacoFormatError, match="'id' appears twice"):
        parse_level(data, "dup.parquet")


def _member_entries(path: Path) -> tuple[list[HeaderEntry], list[str]]:
    with zipfile.ZipFile(path) as archive:
        names = [n for n in archive.namelist() if n.endswith(".parquet")]
        names.append(next(n for n in archive.namelist() if n.endswith("COLLECTION.json")))
        entries = []
        for name in names:
            info = archive.getinfo(name)
            with path.open("rb") as f:
                f.seek(info.header_offset + 26)
                skip = int.from_bytes(f.read(2), "little") + int.from_bytes(f.read(2), "little")
            entries.append(HeaderEntry(info.header_offset + 30 + skip, info.file_size))
    return entries, names


def test_streamed_levels_equal_levels_read_into_memory(tmp_path: Path) -> None:
    path = write_dataset(tmp_path, "3level", "zip")
    entries, labels = _member_entries(path)
    with VSIFile(str(path)) as f:
        copied = parse_metadata_deferring(read_entries(f, entries, labels), labels, str(path))
        sources = read_entries(f, entries, labels, stream_from=1)
        assert all(isinstance(s, StreamedLevel) for s in sources[:-1])
        assert isinstance(sources[-1], pa.Buffer)  # COLLECTION.json always comes as bytes
        streamed = parse_metadata_deferring(sources, labels, str(path), defer=False)
    assert len(streamed[0]) == 3
    for a, b in zip(streamed[0], copied[0], strict=True):
        assert a.equals(b, check_metadata=True)
    assert streamed[1] == copied[1]


def test_remote_levels_are_never_streamed(tmp_path: Path) -> None:
    path = write_dataset(tmp_path, "flat", "zip")
    entries, labels = _member_entries(path)
    from osgeo import gdal

    mem = f"/vsimem/{tmp_path.name}/flat.tacozip"
    gdal.FileFromMemBuffer(mem, path.read_bytes())
    try:
        with VSIFile(mem) as f:
            sources = read_entries(f, entries, labels, stream_from=1)
    finally:
        gdal.Unlink(mem)
    assert all(isinstance(s, pa.Buffer) for s in sources)


def test_streamed_corrupt_level_is_a_format_error(tmp_path: Path) -> None:
    path = write_dataset(tmp_path, "flat", "zip")
    entries, labels = _member_entries(path)
    level0 = entries[0]
    data = bytearray(path.read_bytes())
    data[level0.offset + 4 : level0.offset + level0.length - 8] = bytes(level0.length - 12)
    broken = tmp_path / "broken.tacozip"
    broken.write_bytes(bytes(data))
    with VSIFile(str(broken)) as f:
        sources = read_entries(f, entries, labels, stream_from=1)
        with pytest.raises(TacoFormatError, match="expected a parquet file"):
            parse_metadata_deferring(sources, labels, str(broken), defer=False)


def test_level_file_streamed_or_copied_gives_one_table(tmp_path: Path) -> None:
    folder = write_dataset(tmp_path, "3level", "folder")
    for level in (0, 1, 2):
        stored = str(folder / "METADATA" / f"level{level}.parquet")
        streamed = parse_level_file_deferring(stored, stored, 1, defer=False)[0]
        assert streamed.equals(parse_level(read_all(stored), stored), check_metadata=True)
