"""Verify a TACO FOLDER: every row's file is there and inside the dataset, ``__meta__``, digests."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pyarrow as pa
from osgeo import gdal

from taco_gdal.errors import TacoError
from taco_gdal.format import vsi
from taco_gdal.format.names import DATA_DIR
from taco_gdal.io.stream import Span, stream_spans
from taco_gdal.io.vsi import read_all
from taco_gdal.read.opening.containers._paths import escape_reason, symlink_on_path
from taco_gdal.verify import codes
from taco_gdal.verify._meta import check_meta_tables
from taco_gdal.verify._rows import Collector, Row, iter_rows
from taco_gdal.verify._zip import digest_spans, report_digests

__all__ = ["verify_folder"]


def _size(path: str) -> int | None:
    try:
        stat = gdal.VSIStatL(path)
    except RuntimeError:
        return None
    return None if stat is None or stat.IsDirectory() else int(stat.size)


def _check_row(root: str, row: Row, out: Collector) -> int | None:
    reason = escape_reason(row.path)
    if reason is not None:
        out.add(
            codes.PATH_ESCAPE,
            f"the row's path leaves the dataset ({reason})",
            member=row.member[:200],
            row=row,
        )
        return None
    link = symlink_on_path(vsi.join(root, DATA_DIR), row.member[len(DATA_DIR) + 1 :])
    if link is not None:
        out.add(
            codes.PATH_ESCAPE,
            f"the row's path goes through symlink {link}",
            member=row.member,
            row=row,
        )
        return None
    size = _size(vsi.join(root, row.member))
    if size is None:
        out.add(codes.MISSING_MEMBER, "the row's file does not exist", member=row.member, row=row)
    elif row.size is not None and not row.is_folder and row.size != size:
        out.add(
            codes.INVALID_OFFSET,
            "internal:size differs from the file's size",
            member=row.member,
            row=row,
            expected=size,
            found=row.size,
        )
    return size


def verify_folder(
    root: str, level: str, out: Collector, levels: Sequence[pa.Table], counts: dict[str, int]
) -> None:
    """Every check of ``level`` on the FOLDER dataset at ``root`` (a GDAL path)."""
    rows = list(iter_rows(levels))
    counts["rows"] = counts.get("rows", 0) + len(rows)
    sizes = {row.member: _check_row(root, row, out) for row in rows}

    def read_member(name: str) -> bytes | None:
        if sizes.get(name) is None:
            return None
        try:
            return read_all(vsi.join(root, name))
        except TacoError:
            return None

    check_meta_tables(rows, levels, read_member, out)
    if level == "structure":
        return
    total = 0
    for row in rows:
        size = sizes.get(row.member)
        if size is None or row.is_folder:
            continue
        digests = digest_spans([replace(row, offset=0, size=size)], out) if level == "full" else []
        if level == "full" and row.checksum is not None and not digests:
            continue  # a malformed checksum value, reported
        # crc: the file must read whole
        spans = [d[3] for d in digests] or [Span(0, size, lambda _data: None)]
        try:
            total += stream_spans(vsi.join(root, row.member), spans)
        except TacoError as exc:
            out.add(codes.UNREADABLE, str(exc), member=row.member, row=row)
            continue
        report_digests(digests, out)
    counts["bytes"] = counts.get("bytes", 0) + total
