"""TARIDX 1.0 byte layout: a 64-byte header, two text blocks, 32-byte rows (no I/O here).

::

    [header 64 B][extensions: "\\n"-joined UTF-8][crash stems: "\\n"-joined UTF-8][rows 32 B each]

All integers are little-endian.  A row locates one tar member: shard ``fid``,
``offset`` of its 512-byte tar header (payload at ``offset + 512``), payload
``size``, extension id, collision id and ``keyhash = xxh64(stem)``; see
``/work/shared/spec/004_*.txt``.  Every parser raises :class:`TaridxFormatError`
naming what it expected, what it found and where.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from taco_gdal.containers import TacoFormatError

__all__ = [
    "FLAG_CONTIGUOUS",
    "HEADER_SIZE",
    "MAGIC",
    "MAJOR",
    "MINOR",
    "ROW_DTYPE",
    "ROW_SIZE",
    "TAR_BLOCK",
    "TaridxFormatError",
    "TaridxHeader",
    "TaridxIndex",
    "is_contiguous",
    "pack_index",
    "parse_header",
    "parse_index",
]

MAGIC: Final = b"TARIDX\x00\x00"
"""``TARIDX`` in the 8-byte magic field, NUL padded."""
MAJOR: Final = 1
MINOR: Final = 0
HEADER_SIZE: Final = 64
ROW_SIZE: Final = 32
TAR_BLOCK: Final = 512
"""A tar header block: a row's payload starts ``TAR_BLOCK`` bytes after its offset."""
FLAG_CONTIGUOUS: Final = 0x01
"""Header flag bit 0: rows are grouped contiguously by ``(keyhash, crashid)``."""

_HEADER: Final = struct.Struct("<8sHHHHQQIIQQB7s")
ROW_DTYPE: Final = np.dtype(
    [
        ("fid", "<u2"),
        ("offset", "<u8"),
        ("size", "<u8"),
        ("extid", "<u2"),
        ("crashid", "<u4"),
        ("keyhash", "<u8"),
    ]
)
"""One 32-byte row, packed (numpy adds no padding to a structured dtype by default)."""

Rows = npt.NDArray[Any]


class TaridxFormatError(TacoFormatError):
    """A ``.taridx`` whose header, text blocks or rows break the TARIDX 1.0 layout."""


@dataclass(frozen=True, slots=True)
class TaridxHeader:
    """The 64-byte header; ``reserved`` is kept as read (readers ignore it).

    Example:
        >>> h = TaridxHeader(1, 0, 32, 64, 0, 0, 0, 0, 64, 64, 1)
        >>> parse_header(h.pack(), "x.taridx") == h
        True
    """

    major: int
    minor: int
    rec_size: int
    hdr_size: int
    n_stems: int
    n_rows: int
    n_ext: int
    n_crash: int
    off_crash: int
    off_arr: int
    flags: int
    reserved: bytes = bytes(7)

    @property
    def contiguous(self) -> bool:
        return bool(self.flags & FLAG_CONTIGUOUS)

    def pack(self) -> bytes:
        return _HEADER.pack(
            MAGIC,
            self.major,
            self.minor,
            self.rec_size,
            self.hdr_size,
            self.n_stems,
            self.n_rows,
            self.n_ext,
            self.n_crash,
            self.off_crash,
            self.off_arr,
            self.flags,
            self.reserved,
        )


def parse_header(data: bytes, where: str) -> TaridxHeader:
    """The header from the first 64 bytes; magic, major version and sizes checked.

    Raises:
        TaridxFormatError: short data, wrong magic, unknown major version, or a
            record/header size other than 32/64.
    """
    if len(data) < HEADER_SIZE:
        raise TaridxFormatError(
            f"{where}: a .taridx starts with a {HEADER_SIZE}-byte header; the file has "
            f"{len(data)} bytes"
        )
    magic, *values = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise TaridxFormatError(
            f"{where}: expected magic {MAGIC!r} at byte 0, found {magic!r} (not a .taridx)"
        )
    header = TaridxHeader(*values)
    if header.major != MAJOR:
        raise TaridxFormatError(
            f"{where}: TARIDX major version {header.major} is not supported (expected "
            f"{MAJOR}; minor versions of {MAJOR} are read)"
        )
    for name, expected in (("rec_size", ROW_SIZE), ("hdr_size", HEADER_SIZE)):
        if getattr(header, name) != expected:
            raise TaridxFormatError(
                f"{where}: header {name} must be {expected}, found {getattr(header, name)}"
            )
    return header


@dataclass(frozen=True, eq=False)
class TaridxIndex:
    """A whole index: extension and crash-stem tables, rows, and the stem count.

    ``crash_stems[i]`` is the stem of ``crashid == i + 1``.  ``rows`` is a
    :data:`ROW_DTYPE` array.  ``reserved`` and the version are kept so a parsed
    index packs back to the same bytes.

    Example:
        >>> empty = TaridxIndex((), (), np.zeros(0, ROW_DTYPE), 0)
        >>> parse_index(pack_index(empty), "x.taridx").n_stems
        0
    """

    extensions: tuple[str, ...]
    crash_stems: tuple[str, ...]
    rows: Rows
    n_stems: int
    minor: int = MINOR
    reserved: bytes = field(default=bytes(7))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TaridxIndex):
            return NotImplemented
        return (
            self.extensions,
            self.crash_stems,
            self.n_stems,
            self.minor,
            self.reserved,
        ) == (
            other.extensions,
            other.crash_stems,
            other.n_stems,
            other.minor,
            other.reserved,
        ) and bool(np.array_equal(self.rows, other.rows))


def is_contiguous(rows: Rows) -> bool:
    """Whether rows of one ``(keyhash, crashid)`` key sit next to each other (flag bit 0).

    Example:
        >>> rows = np.zeros(2, ROW_DTYPE)
        >>> is_contiguous(rows)
        True
    """
    if len(rows) < 2:
        return True
    change = (rows["keyhash"][1:] != rows["keyhash"][:-1]) | (
        rows["crashid"][1:] != rows["crashid"][:-1]
    )
    runs = int(change.sum()) + 1
    keys = np.stack([rows["keyhash"], rows["crashid"].astype(np.uint64)], axis=1)
    return runs == len(np.unique(keys, axis=0))


def _block(names: tuple[str, ...], what: str) -> bytes:
    for name in names:
        if "\n" in name:
            raise TaridxFormatError(
                f"TARIDX {what} block: entries are newline-joined, so {name!r} cannot be stored"
            )
    if len(names) == 1 and names[0] == "":
        return b""  # n == 1 tells it apart from an empty table
    text = "\n".join(names)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise TaridxFormatError(
            f"TARIDX {what} block: expected UTF-8 text, {text[exc.start : exc.end]!r} in "
            f"{names!r} cannot be encoded (a member name that is not valid UTF-8)"
        ) from exc


def pack_index(index: TaridxIndex) -> bytes:
    """The bytes of a ``.taridx``: offsets and counts follow from the content.

    Raises:
        TaridxFormatError: an extension or crash stem contains a newline, or
            ``rows`` is not a :data:`ROW_DTYPE` array.
    """
    if index.rows.dtype != ROW_DTYPE:
        raise TaridxFormatError(f"TARIDX rows must have dtype {ROW_DTYPE}, got {index.rows.dtype}")
    ext = _block(index.extensions, "extension")
    crash = _block(index.crash_stems, "crash-stem")
    header = TaridxHeader(
        major=MAJOR,
        minor=index.minor,
        rec_size=ROW_SIZE,
        hdr_size=HEADER_SIZE,
        n_stems=index.n_stems,
        n_rows=len(index.rows),
        n_ext=len(index.extensions),
        n_crash=len(index.crash_stems),
        off_crash=HEADER_SIZE + len(ext),
        off_arr=HEADER_SIZE + len(ext) + len(crash),
        flags=FLAG_CONTIGUOUS if is_contiguous(index.rows) else 0,
        reserved=index.reserved,
    )
    return header.pack() + ext + crash + index.rows.tobytes()


def _names(data: bytes, count: int, what: str, where: str) -> tuple[str, ...]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TaridxFormatError(f"{where}: the {what} block is not UTF-8: {exc}") from exc
    names = tuple(text.split("\n")) if text or count else ()
    if len(names) != count:
        raise TaridxFormatError(
            f"{where}: the header counts {count} {what} entries, the {len(data)}-byte block "
            f"holds {len(names)}"
        )
    return names


def _check_offsets(header: TaridxHeader, size: int, where: str) -> None:
    if not HEADER_SIZE <= header.off_crash <= header.off_arr <= size:
        raise TaridxFormatError(
            f"{where}: expected {HEADER_SIZE} <= off_crash <= off_arr <= file size, found "
            f"off_crash={header.off_crash}, off_arr={header.off_arr}, file size {size}"
        )
    rows = size - header.off_arr
    if rows % ROW_SIZE or rows // ROW_SIZE != header.n_rows:
        raise TaridxFormatError(
            f"{where}: the header counts {header.n_rows} rows ({header.n_rows * ROW_SIZE} "
            f"bytes from off_arr={header.off_arr}); the file holds {rows} bytes of rows "
            f"({rows / ROW_SIZE:g} rows of {ROW_SIZE} bytes; truncated or inconsistent index)"
        )


def _check_ids(rows: Rows, column: str, limit: int, rule: str, where: str) -> None:
    bad = np.flatnonzero(rows[column] >= limit)
    if len(bad):
        row = int(bad[0])
        raise TaridxFormatError(
            f"{where}: row {row} has {column}={int(rows[column][row])}, expected {rule}"
        )


def parse_index(data: bytes, where: str) -> TaridxIndex:
    """A whole ``.taridx`` from its bytes, with every check of spec section 10.

    Raises:
        TaridxFormatError: bad magic/version/sizes, offsets outside the file,
            a row count that does not match ``n_rows``, text blocks whose entry
            counts differ from ``n_ext``/``n_crash``, or an out-of-range id.
    """
    header = parse_header(data[:HEADER_SIZE], where)
    _check_offsets(header, len(data), where)
    extensions = _names(data[HEADER_SIZE : header.off_crash], header.n_ext, "extension", where)
    crash = _names(data[header.off_crash : header.off_arr], header.n_crash, "crash-stem", where)
    rows = np.frombuffer(data, ROW_DTYPE, offset=header.off_arr)
    _check_ids(rows, "extid", header.n_ext, f"extid < n_ext = {header.n_ext}", where)
    _check_ids(rows, "crashid", header.n_crash + 1, f"crashid <= n_crash = {header.n_crash}", where)
    return TaridxIndex(extensions, crash, rows, header.n_stems, header.minor, header.reserved)
