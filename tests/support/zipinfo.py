"""Independent ZIP checks: ZIP64 end records, and the reference writer's level1+ offset
misplacement (reference §1.6).

Uses only ``zipfile``, ``struct`` and pyarrow (never taco_gdal), so a test can
first prove that a file really has a property (ZIP64, the bug) and then that
taco_gdal handles it.
"""

from __future__ import annotations

import io
import pathlib
import struct
import zipfile

import pyarrow.parquet as pq

__all__ = ["member_data_ranges", "misplaced_rows", "zip64_entry_count"]

_LFH = struct.Struct("<4sHHHHHIIIHH")
_EOCD = struct.Struct("<4sHHHHIIH")
_ZIP64_LOCATOR = struct.Struct("<4sIQI")
_ZIP64_EOCD = struct.Struct("<4sQHHIIQQQQ")


def zip64_entry_count(path: pathlib.Path) -> int | None:
    """Members counted by the ZIP64 end record, or None when the archive has none.

    Reads the plain end record (no archive comment is expected), the ZIP64
    locator just before it and the ZIP64 end record it points at.
    """
    with open(path, "rb") as handle:
        handle.seek(0, 2)
        end = handle.tell()
        handle.seek(end - _EOCD.size - _ZIP64_LOCATOR.size)
        tail = handle.read()
        locator = _ZIP64_LOCATOR.unpack_from(tail, 0)
        eocd = _EOCD.unpack_from(tail, _ZIP64_LOCATOR.size)
        if eocd[0] != b"PK\x05\x06":
            raise ValueError(f"{path}: no end of central directory record at {end - _EOCD.size}")
        if locator[0] != b"PK\x06\x07":
            return None
        handle.seek(locator[2])
        record = _ZIP64_EOCD.unpack(handle.read(_ZIP64_EOCD.size))
        if record[0] != b"PK\x06\x06":
            raise ValueError(f"{path}: ZIP64 locator points at {locator[2]}, no ZIP64 record there")
        if eocd[4] != 0xFFFF and record[7] > 0xFFFF:
            raise ValueError(f"{path}: {record[7]} members but EOCD count is {eocd[4]}")
        return int(record[7])


def member_data_ranges(path: pathlib.Path) -> dict[str, tuple[int, int]]:
    """``{member name: (data offset, size)}`` measured from each local file header."""
    out: dict[str, tuple[int, int]] = {}
    with zipfile.ZipFile(path) as archive, open(path, "rb") as handle:
        for info in archive.infolist():
            handle.seek(info.header_offset)
            fields = _LFH.unpack(handle.read(_LFH.size))
            if fields[0] != b"PK\x03\x04":
                raise ValueError(
                    f"{path}: no local header at {info.header_offset} ({info.filename})"
                )
            name_len, extra_len = fields[9], fields[10]
            out[info.filename] = (
                info.header_offset + _LFH.size + name_len + extra_len,
                info.file_size,
            )
    return out


def misplaced_rows(path: pathlib.Path, level: int) -> int:
    """Rows of ``METADATA/level{level}.parquet`` whose offset/size miss their own member.

    A FILE row's member is ``DATA/{relative_path}``; a FOLDER row's is
    ``DATA/{relative_path}__meta__`` (its relative path ends with ``/``).
    """
    ranges = member_data_ranges(path)
    with zipfile.ZipFile(path) as archive:
        table = pq.read_table(io.BytesIO(archive.read(f"METADATA/level{level}.parquet")))
    wrong = 0
    for row in table.select(
        ["internal:relative_path", "internal:offset", "internal:size", "type"]
    ).to_pylist():
        rel = row["internal:relative_path"]
        member = f"DATA/{rel}__meta__" if row["type"] == "FOLDER" else f"DATA/{rel}"
        if ranges.get(member) != (row["internal:offset"], row["internal:size"]):
            wrong += 1
    return wrong
