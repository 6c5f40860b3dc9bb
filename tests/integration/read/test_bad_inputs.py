"""Broken inputs: each raises a TacoError subclass naming the file and what is wrong."""

from __future__ import annotations

import io
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import taco_gdal.read as reader
from taco_gdal.errors import TacoError, TacoFormatError, TacoIOError, TacoQueryError
from taco_gdal.format.header import HeaderEntry, TacoHeader, parse_header, serialize_header
from taco_gdal.format.tacocat import TacoCatHeader
from tests.integration.read.conftest import RefDataset

Reference = Callable[[str, str], RefDataset]


def _copy(path: Path, target: Path) -> Path:
    if path.is_dir():
        shutil.copytree(path, target)
    else:
        shutil.copyfile(path, target)
    return target


def _taco_zip(target: Path, level0: bytes, collection: bytes) -> Path:
    """A TACO ZIP written with Python's zipfile, header patched with the real offsets."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("TACO_HEADER", bytes(116))
        archive.writestr("METADATA/level0.parquet", level0)
        archive.writestr("COLLECTION.json", collection)
    data = bytearray(buffer.getvalue())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        entries = []
        for name in ("METADATA/level0.parquet", "COLLECTION.json"):
            info = archive.getinfo(name)
            start = info.header_offset + 30 + len(name.encode())
            entries.append(HeaderEntry(start, info.file_size))
    data[:157] = serialize_header(TacoHeader(tuple(entries)))
    target.write_bytes(bytes(data))
    return target


def _parquet(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def test_truncated_zip(reference: Reference, tmp_path: Path) -> None:
    source = reference("2level", "zip").path.read_bytes()
    target = tmp_path / "cut.tacozip"
    target.write_bytes(source[: len(source) // 2])
    with pytest.raises(TacoFormatError) as info:
        reader.load(target)
    message = str(info.value)
    assert str(target) in message and "only" in message and "level0.parquet" in message


def test_zip_shorter_than_its_header(reference: Reference, tmp_path: Path) -> None:
    target = tmp_path / "tiny.tacozip"
    target.write_bytes(reference("flat", "zip").path.read_bytes()[:100])
    with pytest.raises(TacoFormatError, match=rf"{target}.*157 bytes"):
        reader.load(target)


def test_header_pointing_past_the_end(reference: Reference, tmp_path: Path) -> None:
    source = bytearray(reference("flat", "zip").path.read_bytes())
    header = parse_header(bytes(source[:157]))
    entries = list(header.entries)
    entries[-1] = HeaderEntry(len(source) + 1000, entries[-1].length)
    source[:157] = serialize_header(TacoHeader(tuple(entries)))
    target = tmp_path / "far.tacozip"
    target.write_bytes(bytes(source))
    with pytest.raises(TacoFormatError) as info:
        reader.load(target)
    message = str(info.value)
    assert str(target) in message and "COLLECTION.json" in message
    assert f"only {len(source)} bytes" in message


def test_zip_parquet_without_id(reference: Reference, tmp_path: Path) -> None:
    folder = reference("flat", "folder").path
    table = pq.read_table(folder / "METADATA" / "level0.parquet").drop_columns(["id"])
    collection = (folder / "COLLECTION.json").read_bytes()
    target = _taco_zip(tmp_path / "noid.tacozip", _parquet(table), collection)
    with pytest.raises(TacoFormatError) as info:
        reader.load(target)
    message = str(info.value)
    assert str(target) in message and "'id' is missing" in message and "level0.parquet" in message


def test_folder_parquet_without_id(reference: Reference, tmp_path: Path) -> None:
    folder = _copy(reference("2level", "folder").path, tmp_path / "copy")
    level1 = folder / "METADATA" / "level1.parquet"
    pq.write_table(pq.read_table(level1).drop_columns(["id"]), level1)
    with pytest.raises(TacoFormatError, match=rf"{level1}.*'id' is missing"):
        reader.load(folder)


def test_not_parquet_and_not_json(reference: Reference, tmp_path: Path) -> None:
    folder = _copy(reference("flat", "folder").path, tmp_path / "copy")
    (folder / "METADATA" / "level0.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(TacoFormatError, match=r"level0\.parquet: expected a parquet file"):
        reader.load(folder)
    (folder / "COLLECTION.json").write_text("{broken")
    with pytest.raises(TacoFormatError, match=r"COLLECTION\.json: expected UTF-8 JSON"):
        reader.load(folder)


@pytest.mark.parametrize("fmt", ["tacocat", "tacocat-binary"])
def test_tacocat_with_missing_source_zip(reference: Reference, tmp_path: Path, fmt: str) -> None:
    ref = reference("2level", fmt)
    folder = _copy(ref.path if ref.path.is_dir() else ref.path.parent, tmp_path / "cat")
    victim = sorted(folder.glob("*.tacozip"))[1]
    victim.unlink()
    target = folder if fmt == "tacocat" else folder / ref.path.name
    with pytest.raises(TacoIOError) as info:
        reader.load(target)
    message = str(info.value)
    assert victim.name in message and "not found" in message and str(folder) in message


def test_tacocat_without_source_file_column(reference: Reference, tmp_path: Path) -> None:
    folder = _copy(reference("flat", "tacocat-dir").path, tmp_path / ".tacocat")
    level0 = folder / "level0.parquet"
    pq.write_table(pq.read_table(level0).drop_columns(["internal:source_file"]), level0)
    with pytest.raises(TacoFormatError, match="internal:source_file"):
        reader.load(folder)


def test_binary_tacocat_with_bad_magic(reference: Reference, tmp_path: Path) -> None:
    ref = reference("flat", "tacocat-binary")
    data = bytearray(ref.path.read_bytes())
    data[:8] = b"NOTACAT\x00"
    target = tmp_path / "__TACOCAT__"
    target.write_bytes(bytes(data))
    with pytest.raises(TacoFormatError, match=rf"{target}: expected magic"):
        reader.load(target)


def test_binary_tacocat_truncated(reference: Reference, tmp_path: Path) -> None:
    ref = reference("flat", "tacocat-binary")
    data = ref.path.read_bytes()
    header = TacoCatHeader.unpack(data)
    folder = _copy(ref.path.parent, tmp_path / "cat")
    target = folder / "__TACOCAT__"
    target.write_bytes(data[: header.collection.offset + 3])
    with pytest.raises(TacoFormatError, match=r"COLLECTION\.json.*only"):
        reader.load(target)


def test_sql_unknown_column(reference: Reference) -> None:
    ref = reference("flat", "tacocat")
    with pytest.raises(TacoQueryError, match="nonexistent_column") as info:
        reader.load(ref.path).sql("SELECT nonexistent_column FROM data")
    assert str(ref.path) in str(info.value)


def test_every_error_is_a_taco_error() -> None:
    for kind in (TacoFormatError, TacoIOError, TacoQueryError):
        assert issubclass(kind, TacoError)
