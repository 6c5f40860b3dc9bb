"""Regression tests for the audit's findings: hostile metadata is refused with a TacoError."""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import taco_gdal
from taco_gdal.errors import TacoError, TacoFormatError
from taco_gdal.format import zip as zipfmt
from taco_gdal.format.header import HEADER_SIZE, HeaderEntry, serialize_payload
from taco_gdal.io.header import read_header
from taco_gdal.read.opening.containers._limits import MAX_COLUMNS, MAX_JSON_DEPTH, loads_json
from tests.integration.verify._zipedit import rebuild_zip
from tests.support.datasets import write_dataset


def _set(table: pa.Table, name: str, row: int, value: object) -> pa.Table:
    values = table.column(name).to_pylist()
    values[row] = value
    i = table.column_names.index(name)
    return table.set_column(i, name, pa.array(values, table.schema.field(name).type))


def _parquet_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return bytes(sink.getvalue().to_pybytes())


def _level0(path: Path) -> pa.Table:
    with zipfile.ZipFile(path) as z:
        return pq.read_table(z.open("METADATA/level0.parquet"))


@pytest.fixture(scope="module")
def flat_zip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_dataset(tmp_path_factory.mktemp("hard"), "flat", "zip")


def test_size_past_the_end_is_refused_at_load(flat_zip: Path, tmp_path: Path) -> None:
    table = _set(_level0(flat_zip), "internal:size", 1, 10**6)
    bad = rebuild_zip(
        flat_zip, tmp_path / "b.tacozip", {"METADATA/level0.parquet": _parquet_bytes(table)}
    )
    with pytest.raises(TacoFormatError, match=r"row 1 \(id 's001'\).*inside"):
        taco_gdal.load(bad)


@pytest.mark.parametrize("value", [2**63 - 1, -5])
def test_huge_or_negative_offset_is_refused_before_gdal(
    flat_zip: Path, tmp_path: Path, value: int
) -> None:
    table = _set(_level0(flat_zip), "internal:offset", 0, value)
    bad = rebuild_zip(
        flat_zip, tmp_path / "b.tacozip", {"METADATA/level0.parquet": _parquet_bytes(table)}
    )
    with pytest.raises(TacoFormatError, match=r"row 0 \(id 's000'\)"):
        taco_gdal.load(bad)


def test_header_entry_beyond_u63_is_a_format_error(flat_zip: Path, tmp_path: Path) -> None:
    bad = tmp_path / "h.tacozip"
    shutil.copy(flat_zip, bad)
    entries = list(read_header(str(bad)).entries)
    entries[0] = HeaderEntry(2**64 - 10, 5)
    data = bytearray(bad.read_bytes())
    data[41:HEADER_SIZE] = serialize_payload(entries)
    bad.write_bytes(bytes(data))
    with pytest.raises(TacoFormatError, match="past the end"):
        taco_gdal.load(bad)


def _with_collection(src: Path, dst: Path, text: str) -> Path:
    return rebuild_zip(src, dst, {"COLLECTION.json": text.encode()})


def test_deep_json_is_refused(flat_zip: Path, tmp_path: Path) -> None:
    text = '{"id": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with pytest.raises(TacoFormatError, match=f"at most {MAX_JSON_DEPTH} deep"):
        taco_gdal.load(_with_collection(flat_zip, tmp_path / "d.tacozip", text))


def test_huge_number_is_refused(flat_zip: Path, tmp_path: Path) -> None:
    text = '{"id": ' + "9" * 5000 + "}"
    with pytest.raises(TacoFormatError, match="number of 5000 characters"):
        taco_gdal.load(_with_collection(flat_zip, tmp_path / "n.tacozip", text))
    assert loads_json('{"a": 1.5}', "x") == {"a": 1.5}


def test_malformed_collection_values_are_normalised(flat_zip: Path, tmp_path: Path) -> None:
    with zipfile.ZipFile(flat_zip) as z:
        collection = json.loads(z.read("COLLECTION.json"))
    collection.update(providers=3, extent="x", licenses={"a": 1}, keywords=[1, 2])
    ds = taco_gdal.load(_with_collection(flat_zip, tmp_path / "m.tacozip", json.dumps(collection)))
    assert ds.collection["providers"] is None and ds.collection["extent"] is None
    assert "flat" in repr(ds) or repr(ds)
    assert ds._repr_html_()
    assert taco_gdal.validate(tmp_path / "m.tacozip").codes >= {"COLLECTION_FIELD"}


def test_duplicate_column_names_are_refused(flat_zip: Path, tmp_path: Path) -> None:
    table = _level0(flat_zip)
    dup = pa.Table.from_arrays([*table.columns, table.column("id")], [*table.column_names, "id"])
    bad = rebuild_zip(
        flat_zip, tmp_path / "c.tacozip", {"METADATA/level0.parquet": _parquet_bytes(dup)}
    )
    with pytest.raises(TacoFormatError, match="'id' appears twice"):
        taco_gdal.load(bad)


def test_undecodable_member_name_is_a_format_error() -> None:
    with pytest.raises(TacoFormatError, match="not valid UTF-8"):
        zipfmt.decode_name(b"DATA/\xff\xfe", zipfmt.UTF8_FLAG)
    entry = zipfmt.CentralDirectoryEntry(b"DATA/\xff", 0, 1, 0, flags=zipfmt.UTF8_FLAG)
    with pytest.raises(TacoFormatError):
        _ = entry.text_name


# --- path escapes ---------------------------------------------------------------------


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    folder = tmp_path / "secret_dir"
    folder.mkdir()
    (folder / "secret.bin").write_bytes(b"TOP SECRET")
    return folder / "secret.bin"


def _folder_with_relpath(tmp_path: Path, value: str) -> Path:
    src = write_dataset(tmp_path / "w", "2level", "folder")
    path = src / "METADATA" / "level1.parquet"
    pq.write_table(_set(pq.read_table(path), "internal:relative_path", 0, value), path)
    return src


@pytest.mark.parametrize("value", ["../../secret_dir/secret.bin", "/etc/hostname", "a\\..\\b"])
def test_folder_relative_path_escape_refused_by_load_and_folder2zip(
    tmp_path: Path, secret: Path, value: str
) -> None:
    src = _folder_with_relpath(tmp_path, value)
    with pytest.raises(TacoFormatError, match="inside the dataset"):
        taco_gdal.load(src)
    with pytest.raises(TacoFormatError):
        taco_gdal.folder2zip(src, tmp_path / "out.tacozip", quiet=True)
    assert not (tmp_path / "out.tacozip").exists()


def test_symlink_under_data_refused_by_load_export_and_folder2zip(
    tmp_path: Path, secret: Path
) -> None:
    src = write_dataset(tmp_path / "w", "flat", "folder")
    ds = taco_gdal.load(src)  # loaded while clean: export re-checks before copying
    target = src / "DATA" / "s001"
    target.unlink()
    os.symlink(secret, target)
    with pytest.raises(TacoFormatError, match="symlink"):
        taco_gdal.load(src)
    with pytest.raises(TacoFormatError, match="symlink"):
        taco_gdal.export(ds, tmp_path / "out", quiet=True)
    with pytest.raises(TacoFormatError, match="symlink"):
        taco_gdal.folder2zip(src, tmp_path / "out.tacozip", quiet=True)
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.tacozip").exists()


@pytest.mark.parametrize("value", ["../secret_dir/secret.tacozip", "/abs/x.tacozip"])
def test_tacocat_source_file_escape_refused(tmp_path: Path, value: str) -> None:
    cat = write_dataset(tmp_path / "w", "flat", "tacocat")
    path = cat / "level0.parquet"
    pq.write_table(_set(pq.read_table(path), "internal:source_file", 0, value), path)
    with pytest.raises(TacoFormatError, match="beside the TACOCAT"):
        taco_gdal.load(cat)
    report = taco_gdal.verify(cat, level="structure")
    assert not report.ok


def test_remote_sizes_never_reach_gdal_unchecked(flat_zip: Path, tmp_path: Path) -> None:
    bad = tmp_path / "t.tacozip"
    data = flat_zip.read_bytes()
    bad.write_bytes(data[: len(data) // 2])  # truncated: header points past the end
    with pytest.raises(TacoError):
        taco_gdal.load(bad)


def test_level_with_too_many_columns_is_refused_before_reading(tmp_path: Path) -> None:
    src = write_dataset(tmp_path / "w", "flat", "folder")
    path = src / "METADATA" / "level0.parquet"
    table = pq.read_table(path)
    extra = MAX_COLUMNS + 1 - table.num_columns
    names = [*table.column_names, *(f"c{i}" for i in range(extra))]
    filler = pa.nulls(table.num_rows, pa.int8())
    pq.write_table(pa.Table.from_arrays([*table.columns, *[filler] * extra], names), path)
    with pytest.raises(TacoFormatError, match=f"at most {MAX_COLUMNS} columns"):
        taco_gdal.load(src)


@pytest.mark.parametrize(("offset", "size"), [(2**64, 10), (0, 2**64), (-1, 10), (10, 2**40)])
def test_vsi_reads_check_offsets_and_sizes_before_gdal(
    flat_zip: Path, offset: int, size: int
) -> None:
    from taco_gdal.io.vsi import VSIFile

    with VSIFile(str(flat_zip)) as f:
        if size == 2**40:  # clamped to the file: no terabyte allocation, the bytes that exist
            assert len(f.read_at(offset, size)) == flat_zip.stat().st_size - offset
        else:
            with pytest.raises(TacoFormatError, match="offset and a size"):
                f.read_at(offset, size)
