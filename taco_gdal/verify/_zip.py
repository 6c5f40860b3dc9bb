"""Verify a TACO ZIP: header, central directory, local headers, rows, CRC-32, digests."""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pyarrow as pa

from taco_gdal.errors import TacoError, TacoFormatError
from taco_gdal.format import zip as zipfmt
from taco_gdal.format.checksum import Hasher, crc32, new_hasher, parse_checksum
from taco_gdal.format.header import HEADER_NAME, HEADER_SIZE, PAYLOAD_OFFSET, parse_header
from taco_gdal.format.names import COLLECTION_FILE, level_member
from taco_gdal.io.stream import Span, stream_spans
from taco_gdal.io.vsi import VSIFile
from taco_gdal.verify import codes
from taco_gdal.verify._meta import check_meta_tables
from taco_gdal.verify._rows import Collector, Row, iter_rows

__all__ = ["Member", "ZipLayout", "read_layout", "verify_zip"]

_LFH_SLACK = 64
"""Bytes read past a local header's name for its extra field (STORE + ZIP64 needs 20)."""
_COALESCE = 256 * 1024


@dataclass(slots=True)
class Member:
    """A member as the central directory and its local header describe it."""

    name: str
    crc32: int
    size: int
    lfh_offset: int
    data_start: int = -1

    @property
    def data_end(self) -> int:
        return self.data_start + self.size


@dataclass(slots=True)
class ZipLayout:
    """Every member of an archive, with where its data starts."""

    path: str
    file_size: int
    members: list[Member] = field(default_factory=list)
    cd_offset: int = 0

    def by_name(self) -> dict[str, Member]:
        return {m.name: m for m in self.members}


def _check_end_records(f: VSIFile, cd: zipfmt.CentralDirectory, size: int, out: Collector) -> None:
    """EOCD and ZIP64 EOCD agree, and the central directory ends where they start."""
    eocd = zipfmt.EndOfCentralDirectory.unpack(f.read_at(cd.eocd_offset, zipfmt.EOCD_SIZE), f.path)
    end = cd.zip64_eocd_offset if cd.zip64_eocd_offset is not None else cd.eocd_offset
    if cd.cd_offset + cd.cd_size != end:
        out.add(
            codes.BAD_CENTRAL_DIRECTORY,
            f"the central directory should end where the end records start (byte {end}), "
            f"it ends at {cd.cd_offset + cd.cd_size}",
            expected=end,
            found=cd.cd_offset + cd.cd_size,
        )
    if cd.zip64_eocd_offset is None:
        return
    pairs = (
        ("entry count", eocd.entries, len(cd.entries), zipfmt.ZIP64_COUNT_LIMIT),
        ("central directory size", eocd.cd_size, cd.cd_size, zipfmt.ZIP64_LIMIT),
        ("central directory offset", eocd.cd_offset, cd.cd_offset, zipfmt.ZIP64_LIMIT),
    )
    for what, classic, real, limit in pairs:
        if classic not in (real, limit):
            out.add(
                codes.BAD_CENTRAL_DIRECTORY,
                f"EOCD {what} disagrees with the ZIP64 EOCD record",
                expected=f"{real} or 0x{limit:x}",
                found=classic,
            )


def _local_headers(f: VSIFile, members: list[Member], out: Collector) -> None:
    """Read every local header (neighbours in one range) and set ``data_start``."""
    order = sorted(members, key=lambda m: m.lfh_offset)
    file_size = f.size()
    i = 0
    while i < len(order):
        j, end = i, order[i].lfh_offset
        while j < len(order) and order[j].lfh_offset - end <= _COALESCE:
            end = order[j].lfh_offset + zipfmt.LFH_SIZE + len(order[j].name.encode()) + _LFH_SLACK
            end = min(end, file_size)
            j += 1
        start = order[i].lfh_offset
        block = f.read_at(start, max(0, end - start))
        for member in order[i:j]:
            rel = member.lfh_offset - start
            _check_local(member, block[rel:], f.path, out)
        i = j


def _check_local(member: Member, buffer: bytes, where: str, out: Collector) -> None:
    try:
        lfh = zipfmt.LocalFileHeader.unpack(buffer, f"{where} at byte {member.lfh_offset}")
    except TacoFormatError as exc:
        out.add(codes.LOCAL_HEADER_MISMATCH, str(exc), member=member.name)
        return
    member.data_start = member.lfh_offset + lfh.packed_size
    if _decoded(lfh.name, lfh.flags) != member.name:
        out.add(
            codes.LOCAL_HEADER_MISMATCH,
            f"the local header at byte {member.lfh_offset} names another member",
            member=member.name,
            expected=member.name,
            found=repr(lfh.name[:200]),
        )
    if lfh.flags & 0x08:  # a data descriptor holds the CRC-32 and sizes
        return
    for what, expected, found in (
        ("CRC-32", f"0x{member.crc32:08x}", f"0x{lfh.crc32:08x}"),
        ("size", member.size, lfh.size),
    ):
        if found != expected:
            out.add(
                codes.LOCAL_HEADER_MISMATCH,
                f"the local header's {what} differs from the central directory's",
                member=member.name,
                expected=expected,
                found=found,
            )


def _decoded(name: bytes, flags: int) -> str | None:
    try:
        return zipfmt.decode_name(name, flags)
    except (UnicodeDecodeError, TacoFormatError):
        return None


def read_layout(f: VSIFile, out: Collector) -> ZipLayout | None:
    """The archive's members, or ``None`` (failure recorded) if its directory is unreadable."""
    size = f.size()
    layout = ZipLayout(f.path, size)
    try:
        cd = zipfmt.read_central_directory(f.read_at, size, f.path)
        _check_end_records(f, cd, size, out)
    except TacoFormatError as exc:
        out.add(codes.BAD_CENTRAL_DIRECTORY, str(exc))
        return None
    layout.cd_offset = cd.cd_offset
    for index, entry in enumerate(cd.entries):
        if _decoded(entry.name, entry.flags) is None:
            out.add(
                codes.BAD_CENTRAL_DIRECTORY,
                f"central directory entry {index}: member name is not valid UTF-8",
                found=repr(entry.name[:200]),
            )
            continue
        member = Member(entry.text_name, entry.crc32, entry.size, entry.lfh_offset)
        if entry.method != 0 or entry.real_compressed_size != entry.size:
            out.add(
                codes.NOT_STORED,
                "TACO members must be STORE (method 0, compressed size = size)",
                member=member.name,
                expected="method 0",
                found=f"method {entry.method}",
            )
        if entry.lfh_offset + zipfmt.LFH_SIZE > cd.cd_offset:
            out.add(
                codes.LOCAL_HEADER_MISMATCH,
                f"local header offset {entry.lfh_offset} is past the start of the central "
                f"directory ({cd.cd_offset})",
                member=member.name,
            )
            continue
        layout.members.append(member)
    _local_headers(f, layout.members, out)
    _check_overlaps(layout, out)
    return layout


def _check_overlaps(layout: ZipLayout, out: Collector) -> None:
    placed = sorted((m for m in layout.members if m.data_start >= 0), key=lambda m: m.lfh_offset)
    for a, b in itertools.pairwise(placed):
        if a.data_end > b.lfh_offset:
            out.add(
                codes.OVERLAPPING_MEMBERS,
                f"member {a.name!r} (data {a.data_start}..{a.data_end}) overlaps the local "
                f"header of {b.name!r} at byte {b.lfh_offset}",
                member=a.name,
                expected=f"end <= {b.lfh_offset}",
                found=a.data_end,
            )
    if placed and placed[-1].data_end > layout.cd_offset:
        last = placed[-1]
        out.add(
            codes.OVERLAPPING_MEMBERS,
            f"member {last.name!r} ends at byte {last.data_end}, inside the central directory "
            f"(starts at {layout.cd_offset})",
            member=last.name,
            expected=f"end <= {layout.cd_offset}",
            found=last.data_end,
        )


def _check_header(f: VSIFile, layout: ZipLayout, out: Collector) -> int:
    """Check the TACO_HEADER; returns how many level tables it lists (0 if unreadable)."""
    head = f.read_at(0, HEADER_SIZE)
    try:
        header = parse_header(head, f.path)
    except TacoFormatError as exc:
        out.add(codes.BAD_HEADER, str(exc), member=HEADER_NAME.decode())
        return 0
    entries = [e for e in header.entries if e.length > 0]
    payload_crc = zlib.crc32(head[PAYLOAD_OFFSET:HEADER_SIZE])
    stored = zipfmt.LocalFileHeader.unpack(bytes(head), f.path).crc32
    if payload_crc != stored:
        out.add(
            codes.BAD_HEADER,
            "the TACO_HEADER local header's CRC-32 does not match its payload (an interrupted "
            "in-place update? verify(..., repair=True) rewrites it)",
            member=HEADER_NAME.decode(),
            expected=f"0x{payload_crc:08x}",
            found=f"0x{stored:08x}",
        )
    names = [level_member(i) for i in range(len(entries) - 1)] + [COLLECTION_FILE]
    members = layout.by_name()
    for i, (entry, name) in enumerate(zip(entries, names, strict=True)):
        member = members.get(name)
        if member is None:
            out.add(
                codes.HEADER_ENTRY_MISMATCH,
                f"TACO_HEADER entry {i} should point at member {name!r}, which does not exist",
                member=name,
            )
        elif (entry.offset, entry.length) != (member.data_start, member.size):
            out.add(
                codes.HEADER_ENTRY_MISMATCH,
                f"TACO_HEADER entry {i} does not point at the data of {name!r}",
                member=name,
                expected=f"{member.data_start}+{member.size}",
                found=f"{entry.offset}+{entry.length}",
            )
    return max(0, len(entries) - 1)


def check_rows(
    rows: Sequence[Row], layout: ZipLayout, out: Collector, container: str = ""
) -> dict[str, Row]:
    """Each row's offset/size is its member's data range; returns member name -> row."""
    members = layout.by_name()
    starts = {m.data_start: m for m in layout.members if m.data_start >= 0}
    owners: dict[str, Row] = {}
    prefix = f"{container}: " if container else ""
    for row in rows:
        member = members.get(row.member)
        if member is None:
            # only a deeper row without internal:relative_path has no computable member
            # name; any other row must name its member exactly
            guessable = row.level > 0 and row.relative_path is None and row.offset is not None
            member = starts.get(row.offset) if guessable and row.offset is not None else None
            if member is None:
                out.add(
                    codes.MISSING_MEMBER,
                    f"{prefix}no member {row.member!r} and none whose data starts at {row.offset}",
                    member=row.member,
                    row=row,
                )
                continue
        owners[member.name] = row
        if (row.offset, row.size) != (member.data_start, member.size):
            out.add(
                codes.INVALID_OFFSET,
                f"{prefix}internal:offset/internal:size is not the data range of its member",
                member=member.name,
                row=row,
                expected=f"{member.data_start}+{member.size}",
                found=f"{row.offset}+{row.size}",
            )
    return owners


def _crc_sink(member: Member, results: dict[str, int]) -> Callable[[memoryview], None]:
    results[member.name] = 0

    def sink(data: memoryview) -> None:
        results[member.name] = crc32(data, results[member.name])

    return sink


def digest_spans(rows: Sequence[Row], out: Collector) -> list[tuple[Row, str, Hasher, Span]]:
    """A hashing span for every row with a ``taco_gdal:checksum`` value."""
    spans: list[tuple[Row, str, Hasher, Span]] = []
    for row in rows:
        if row.checksum is None or row.offset is None or row.size is None:
            continue
        try:
            digest = parse_checksum(row.checksum, f"{row.label} checksum")
        except TacoFormatError as exc:
            out.add(codes.BAD_CHECKSUM_VALUE, str(exc), member=row.member, row=row)
            continue
        hasher = new_hasher(digest.algorithm)
        span = Span(row.offset, row.offset + row.size, hasher.update)
        spans.append((row, str(digest), hasher, span))
    return spans


def report_digests(spans: Sequence[tuple[Row, str, Hasher, Span]], out: Collector) -> None:
    for row, expected, hasher, _span in spans:
        found = f"{expected.split(':', 1)[0]}:{hasher.hexdigest()}"
        if found != expected:
            out.add(
                codes.HASH_MISMATCH,
                "the sample's bytes do not match its taco_gdal:checksum",
                member=row.member,
                row=row,
                expected=expected,
                found=found,
            )


def verify_zip(
    path: str,
    level: str,
    out: Collector,
    levels: Sequence[pa.Table] | None,
    counts: dict[str, int],
    extra_rows: Sequence[Row] = (),
) -> None:
    """Every check of ``level`` on the archive at ``path`` (a GDAL path).

    ``levels`` ``None`` skips the row checks; ``extra_rows`` (TACOCAT rows pointing
    into this archive) get their ranges and digests checked too.
    """
    with VSIFile(path) as f:
        layout = read_layout(f, out)
        if layout is None:
            return
        counts["members"] = counts.get("members", 0) + len(layout.members)
        _check_header(f, layout, out)
        owners: dict[str, Row] = {}
        rows: list[Row] = []
        if levels is not None:
            rows = list(iter_rows(levels))
            counts["rows"] = counts.get("rows", 0) + len(rows)
            owners = check_rows(rows, layout, out)
            by_name = layout.by_name()
            check_meta_tables(
                rows, levels, lambda name: _member_bytes(f, layout, by_name, name), out
            )
        if extra_rows:
            check_rows(extra_rows, layout, out, "TACOCAT")
            rows += extra_rows
    if level == "structure":
        return
    crcs: dict[str, int] = {}
    spans = [
        Span(m.data_start, m.data_end, _crc_sink(m, crcs))
        for m in layout.members
        if m.data_start >= 0 and m.data_end <= layout.file_size
    ]
    digests = digest_spans(rows, out) if level == "full" else []
    valid = [d for d in digests if d[3].end <= layout.file_size]
    try:
        counts["bytes"] = counts.get("bytes", 0) + stream_spans(path, spans + [d[3] for d in valid])
    except TacoError as exc:
        out.add(codes.UNREADABLE, str(exc))
        return
    for member in layout.members:
        if member.name not in crcs:
            continue
        if crcs[member.name] != member.crc32:
            row = owners.get(member.name)
            out.add(
                codes.CRC_MISMATCH,
                "the member's bytes do not match the CRC-32 of its central directory entry"
                + (f" (sample {row.label})" if row else ""),
                member=member.name,
                row=row,
                expected=f"0x{member.crc32:08x}",
                found=f"0x{crcs[member.name]:08x}",
            )
    report_digests(valid, out)


def _member_bytes(
    f: VSIFile, layout: ZipLayout, by_name: dict[str, Member], name: str
) -> bytes | None:
    member = by_name.get(name)
    if member is None or member.data_start < 0 or member.data_end > layout.file_size:
        return None
    return f.read_at(member.data_start, member.size)
