"""Checks shared by the writer tests: a written container against the package it came from."""

from __future__ import annotations

import json
import struct
import subprocess
import zipfile
import zlib
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from taco_gdal.format import names
from taco_gdal.format.header import HEADER_SIZE, parse_header
from taco_gdal.format.vsi import build_subfile, to_vsi
from taco_gdal.format.zip import LocalFileHeader, read_central_directory
from taco_gdal.io.vsi import VSIFile
from taco_gdal.model.package import MetadataPackage

CHUNK = 16 * 1024 * 1024
STORED_INTERNAL_ZIP = [names.CURRENT_ID, names.PARENT_ID, names.OFFSET, names.SIZE]


def members(path: Path) -> dict[str, tuple[int, int, int, int]]:
    """``name -> (data offset, size, method, crc)`` from the central directory and local headers."""
    out: dict[str, tuple[int, int, int, int]] = {}
    with open(path, "rb") as f:

        def read_at(offset: int, size: int) -> bytes:
            f.seek(offset)
            return f.read(size)

        directory = read_central_directory(read_at, path.stat().st_size, str(path))
        for entry in directory.entries:
            fixed = read_at(entry.lfh_offset, 30)
            name_len, extra_len = struct.unpack_from("<HH", fixed, 26)
            lfh = LocalFileHeader.unpack(
                read_at(entry.lfh_offset, 30 + name_len + extra_len), str(path)
            )
            assert lfh.name == entry.name
            assert lfh.crc32 == entry.crc32 and lfh.size == entry.size
            data_offset = entry.lfh_offset + lfh.packed_size
            out[entry.text_name] = (data_offset, entry.size, entry.method, entry.crc32)
    return out


def member_order(path: Path) -> list[str]:
    with open(path, "rb") as f:

        def read_at(offset: int, size: int) -> bytes:
            f.seek(offset)
            return f.read(size)

        directory = read_central_directory(read_at, path.stat().st_size, str(path))
    return [e.text_name for e in directory.entries]


def same_bytes(vsi_path: str, source: str) -> int | None:
    """CRC-32 of ``vsi_path`` when it holds exactly the bytes of ``source``, else None."""
    crc = 0
    with VSIFile(vsi_path) as got, VSIFile(to_vsi(source)) as want:
        size = got.size()
        if want.size() != size:
            return None
        for offset in range(0, size, CHUNK):
            n = min(CHUNK, size - offset)
            block = got.read_exact(offset, n)
            if block != want.read_exact(offset, n):
                return None
            crc = zlib.crc32(block, crc)
    return crc


def unzip_test(path: Path, exclude: tuple[str, ...] = ()) -> None:
    """``unzip -t`` (Info-ZIP) passes; ``exclude`` skips huge members (its CRC runs ~90 MB/s)."""
    command = ["unzip", "-tqq", str(path)]
    if exclude:
        command += ["-x", *exclude]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def member_name(table: pa.Table, level: int, row: int) -> str:
    sample_id = table.column(names.ID)[row].as_py()
    sample_type = table.column(names.TYPE)[row].as_py()
    rel = (
        sample_id + ("/" if sample_type == names.FOLDER else "")
        if level == 0
        else table.column(names.RELATIVE_PATH)[row].as_py()
    )
    suffix = names.LOCAL_META if sample_type == names.FOLDER else ""
    return f"{names.DATA_DIR}/{rel}{suffix}"


def expected_columns(package_table: pa.Table, level: int, zip_container: bool) -> list[str]:
    user = [
        c
        for c in package_table.column_names
        if c not in (names.PATH, names.ID, names.TYPE) and not c.startswith(names.INTERNAL_PREFIX)
    ]
    internal = STORED_INTERNAL_ZIP if zip_container else [names.CURRENT_ID, names.PARENT_ID]
    tail = [names.RELATIVE_PATH] if level > 0 else []
    return [names.ID, names.TYPE, *user, *internal, *tail]


def verify_zip(
    path: Path, package: MetadataPackage, unzip_exclude: tuple[str, ...] = ()
) -> list[pa.Table]:
    """Every check of the ZIP layout; returns the stored level tables.

    ``unzip -t`` and Python's ``zipfile`` check the archive and every CRC
    independently of taco_gdal; every level row's offset/size must equal the
    data of its member in the central directory, and every FILE sample's bytes
    read back through ``/vsisubfile/`` must equal its source.
    """
    unzip_test(path, unzip_exclude)
    if not unzip_exclude:
        with zipfile.ZipFile(path) as archive:
            assert archive.testzip() is None
    found = members(path)
    order = member_order(path)
    assert order[0] == names.HEADER_MEMBER and found[order[0]][0] == 41
    assert order[-1] == names.COLLECTION_FILE
    assert all(member[2] == 0 for member in found.values())
    with open(path, "rb") as f:
        header = parse_header(f.read(HEADER_SIZE))
    expected_entries = [names.level_member(k) for k in range(len(package.levels))]
    expected_entries.append(names.COLLECTION_FILE)
    assert [(e.offset, e.length) for e in header.entries] == [
        found[n][:2] for n in expected_entries
    ]
    vsi = to_vsi(path)
    levels = []
    for level, (entry, source_table) in enumerate(
        zip(header.entries[:-1], package.levels, strict=True)
    ):
        with VSIFile(vsi) as f:
            table = pq.read_table(pa.BufferReader(f.read_exact(entry.offset, entry.length)))
        assert table.column_names == expected_columns(source_table, level, True)
        assert table.num_rows == source_table.num_rows
        offsets = table.column(names.OFFSET).to_pylist()
        sizes = table.column(names.SIZE).to_pylist()
        sources = source_table.column(names.PATH).to_pylist()
        for row in range(table.num_rows):
            name = member_name(table, level, row)
            assert (offsets[row], sizes[row]) == found[name][:2], (level, row, name)
            is_file = table.column(names.TYPE)[row].as_py() == names.FILE
            if is_file and sizes[row] == 0:  # /vsisubfile/ size 0 means "to the end"
                assert sources[row] is None or Path(sources[row]).stat().st_size == 0
            elif is_file:
                subfile = build_subfile(offsets[row], sizes[row], vsi)
                crc = same_bytes(subfile, sources[row])
                assert crc is not None, (level, row, name)
                assert crc == found[name][3], (level, row, name)
        levels.append(table)
    _verify_local_meta(vsi, levels)
    collection = _read_json(vsi, header.entries[-1].offset, header.entries[-1].length)
    assert collection == json.loads(json.dumps(package.collection))
    return levels


def _read_json(vsi: str, offset: int, length: int) -> Any:
    with VSIFile(vsi) as f:
        return json.loads(f.read_exact(offset, length))


def _verify_local_meta(vsi: str, levels: list[pa.Table]) -> None:
    """Each FOLDER row's __meta__ lists its children with the level table's offsets."""
    for level in range(len(levels) - 1):
        table, children = levels[level], levels[level + 1]
        parent_ids = children.column(names.PARENT_ID).to_pylist()
        for row in range(table.num_rows):
            if table.column(names.TYPE)[row].as_py() != names.FOLDER:
                continue
            offset = table.column(names.OFFSET)[row].as_py()
            size = table.column(names.SIZE)[row].as_py()
            with VSIFile(vsi) as f:
                meta = pq.read_table(pa.BufferReader(f.read_exact(offset, size)))
            rows = [i for i, p in enumerate(parent_ids) if p == row]
            kids = children.take(rows)
            assert meta.column(names.ID).to_pylist() == kids.column(names.ID).to_pylist()
            assert meta.column(names.OFFSET).to_pylist() == kids.column(names.OFFSET).to_pylist()
            assert meta.column(names.SIZE).to_pylist() == kids.column(names.SIZE).to_pylist()
            assert meta.column_names[-2:] == [names.OFFSET, names.SIZE]
            assert not any(c in meta.column_names for c in (names.PARENT_ID, names.PATH))


def verify_folder(root: Path, package: MetadataPackage) -> list[pa.Table]:
    """Every check of the FOLDER layout; returns the stored level tables."""
    levels = []
    for level, source_table in enumerate(package.levels):
        table = pq.read_table(root / names.METADATA_DIR / names.level_file(level))
        assert table.column_names == expected_columns(source_table, level, False)
        sources = source_table.column(names.PATH).to_pylist()
        for row in range(table.num_rows):
            name = member_name(table, level, row)
            target = root / name
            assert target.is_file(), target
            if table.column(names.TYPE)[row].as_py() == names.FILE:
                expected = b"" if sources[row] is None else Path(sources[row]).read_bytes()
                assert target.read_bytes() == expected
            else:
                meta = pq.read_table(target)
                assert names.OFFSET not in meta.column_names
                assert meta.column_names[:2] == [names.ID, names.TYPE]
        levels.append(table)
    assert not (root / names.METADATA_DIR / names.level_file(len(package.levels))).exists()
    collection = json.loads((root / names.COLLECTION_FILE).read_bytes())
    assert collection == json.loads(json.dumps(package.collection))
    return levels
