"""An independent check of the reference writer's level1+ offset misplacement (reference §1.6).

Uses only ``zipfile``, ``struct`` and pyarrow (never taco_gdal), so a test can
first prove that a file really carries the bug and then that taco_gdal reads it
right anyway.
"""

from __future__ import annotations

import io
import pathlib
import struct
import zipfile

import pyarrow.parquet as pq

__all__ = ["member_data_ranges", "misplaced_rows"]

_LFH = struct.Struct("<4sHHHHHIIIHH")


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
