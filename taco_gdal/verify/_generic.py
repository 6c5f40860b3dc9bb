"""What ``verify`` checks of a container without a ``verify`` method of its own (CAF, TARIDX).

Every row's byte range must lie inside its file; ``crc`` reads every sample's
bytes, ``full`` also compares the digests of column ``taco_gdal:checksum``.
"""

from __future__ import annotations

from collections import defaultdict

from taco_gdal.errors import TacoError
from taco_gdal.format import vsi
from taco_gdal.io.stream import Span, stream_spans
from taco_gdal.io.vsi import file_size
from taco_gdal.read.opening.containers._paths import escape_reason
from taco_gdal.read.opening.containers.base import Container
from taco_gdal.verify import codes
from taco_gdal.verify._rows import Collector, Row, iter_rows
from taco_gdal.verify._zip import digest_spans, report_digests
from taco_gdal.verify.report import Failure

__all__ = ["verify_ranges"]


def _file_of(container: Container, row: Row) -> str | None:
    rule = container.vsi_rule
    if rule.kind == "subfile":
        return rule.root
    if rule.kind == "source_file" and row.source_file is not None:
        return vsi.join(rule.root, row.source_file)
    return None


def verify_ranges(container: Container, level: str) -> list[Failure]:
    """Failures of the default hook (see the module docstring)."""
    out = Collector()
    groups: dict[str, list[Row]] = defaultdict(list)
    for row in iter_rows(container.levels):
        if row.source_file is not None and escape_reason(row.source_file) is not None:
            out.add(codes.PATH_ESCAPE, "internal:source_file leaves the dataset", row=row)
            continue
        path = _file_of(container, row)
        if path is not None and row.offset is not None and row.size is not None:
            groups[path].append(row)
    for path, rows in groups.items():
        try:
            size = file_size(path)
        except TacoError as exc:
            out.add(codes.MISSING_MEMBER, str(exc), member=path)
            continue
        inside = []
        for row in rows:
            assert row.offset is not None and row.size is not None
            if row.offset < 0 or row.size < 0 or row.offset + row.size > size:
                out.add(
                    codes.INVALID_OFFSET,
                    f"the row's byte range is not inside {path} ({size} bytes)",
                    member=path,
                    row=row,
                    expected=f"0..{size}",
                    found=f"{row.offset}+{row.size}",
                )
            else:
                inside.append(row)
        if level == "structure":
            continue
        digests = digest_spans(inside, out) if level == "full" else []
        spans = [
            Span(r.offset or 0, (r.offset or 0) + (r.size or 0), lambda _d: None) for r in inside
        ]
        try:
            stream_spans(path, spans + [d[3] for d in digests])
        except TacoError as exc:
            out.add(codes.UNREADABLE, str(exc), member=path)
            continue
        report_digests(digests, out)
    return out.failures
