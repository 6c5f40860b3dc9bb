"""CoZIP 1.0.1 byte layout: the ``__cozip__`` local header, the index, the FNV-1a-64 check.

Pure parsing, no I/O.  A CoZIP archive starts with a 51-byte ZIP local file
header (30 fixed bytes, the 9-byte name ``__cozip__``, a 12-byte extra field
``0xCA0C`` holding the integrity hash at archive bytes 43..50); the index
payload follows at byte 51::

    magic "CZIP" | version u16 | profile u8 | n u32 | n x name_len u16 |
    names (UTF-8) | n x offset u64 | n x size u64          (all little-endian)

The integrity hash is FNV-1a 64 over the union, in archive order, of the index
payload ``[51, 51 + index_size)`` and the last 32 KiB of the archive.  Every
parser raises :class:`CozipFormatError` (a ``TacoFormatError``) saying what it
expected, what it found and where.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Final

from taco_gdal.containers import TacoFormatError

__all__ = [
    "HASH_WINDOW",
    "INDEX_NAME",
    "INDEX_OFFSET",
    "MAGIC",
    "PROFILE_FLAT",
    "PROFILE_NONE",
    "PROFILE_TACO",
    "CozipEntry",
    "CozipFormatError",
    "CozipHeader",
    "CozipIndex",
    "check_entries",
    "fnv1a64",
    "hash_ranges",
    "looks_like_cozip",
    "parse_header",
    "parse_index",
    "verify_hash",
]

INDEX_NAME: Final = b"__cozip__"
INDEX_OFFSET: Final = 51
"""Byte where the index payload starts (30 + 9 + 12)."""
HASH_WINDOW: Final = 32768
"""Bytes at the end of the archive covered by the integrity hash."""
MAGIC: Final = b"CZIP"
VERSION: Final = 1
PROFILE_NONE: Final = 0
PROFILE_FLAT: Final = 1
PROFILE_TACO: Final = 2
_LFH_SIGNATURE: Final = b"PK\x03\x04"
_EXTRA_ID: Final = 0xCA0C
_INDEX_HEADER: Final = struct.Struct("<4sHBI")
_LFH: Final = struct.Struct("<4sHHHHHIIIHH")
_FNV_OFFSET: Final = 0xCBF29CE484222325
_FNV_PRIME: Final = 0x100000001B3
_MASK: Final = 0xFFFFFFFFFFFFFFFF
_FORBIDDEN_FLAGS: Final = (1 << 0) | (1 << 3) | (1 << 6) | (1 << 13)


class CozipFormatError(TacoFormatError):
    """A CoZIP index or its local header does not follow CoZIP 1.0.1."""


@dataclass(frozen=True, slots=True)
class CozipHeader:
    """What the 51-byte local header of ``__cozip__`` says.

    Example:
        >>> CozipHeader(index_size=128, stored_hash=0).index_end
        179
    """

    index_size: int
    stored_hash: int

    @property
    def index_end(self) -> int:
        """First byte after the index payload."""
        return INDEX_OFFSET + self.index_size


@dataclass(frozen=True, slots=True)
class CozipEntry:
    """One priority file: its name and payload byte range.

    Example:
        >>> CozipEntry("COLLECTION.json", 100, 20).end
        120
    """

    name: str
    offset: int
    size: int

    @property
    def end(self) -> int:
        """First byte after the payload."""
        return self.offset + self.size


@dataclass(frozen=True, slots=True)
class CozipIndex:
    """The parsed index: format version, profile byte and priority entries.

    Example:
        >>> CozipIndex(1, PROFILE_TACO, ()).profile
        2
    """

    version: int
    profile: int
    entries: tuple[CozipEntry, ...]

    def by_name(self) -> dict[str, CozipEntry]:
        """Entries keyed by name."""
        return {entry.name: entry for entry in self.entries}


def looks_like_cozip(head: bytes) -> bool:
    """Whether the first bytes of a file are a CoZIP index entry (no validation).

    Example:
        >>> looks_like_cozip(b"PK\\x03\\x04" + bytes(26) + b"__cozip__")
        True
    """
    return head[:4] == _LFH_SIGNATURE and head[30:39] == INDEX_NAME


def parse_header(head: bytes, where: str) -> CozipHeader:
    """The index size and stored hash from the first 51 bytes (CoZIP §8.5 step 1).

    Raises:
        CozipFormatError: any check of §8.5 step 1 fails.

    Example:
        >>> parse_header(b"PK\\x03\\x04", "x.zip")  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        CozipFormatError: ...
    """
    if len(head) < INDEX_OFFSET:
        raise CozipFormatError(
            f"{where}: expected the {INDEX_OFFSET}-byte __cozip__ local header at byte 0, "
            f"found only {len(head)} bytes"
        )
    (sig, _ver, flags, method, _t, _d, _crc, csize, usize, name_len, extra_len) = _LFH.unpack_from(
        head
    )
    problems = []
    if sig != _LFH_SIGNATURE:
        problems.append(f"signature {sig!r} (expected {_LFH_SIGNATURE!r})")
    if flags & _FORBIDDEN_FLAGS:
        problems.append(f"general purpose flags 0x{flags:04x} (bits 0, 3, 6, 13 must be unset)")
    if method != 0:
        problems.append(f"compression method {method} (expected 0, STORE)")
    if csize != usize or not 0 < csize < 0xFFFFFFFF:
        problems.append(f"sizes {csize}/{usize} (expected equal, > 0, < 0xFFFFFFFF)")
    if name_len != len(INDEX_NAME) or head[30:39] != INDEX_NAME:
        problems.append(f"name {head[30 : 30 + min(name_len, 64)]!r} (expected {INDEX_NAME!r})")
    if extra_len != 12:
        problems.append(f"extra field length {extra_len} (expected 12)")
    extra_id, extra_size = struct.unpack_from("<HH", head, 39)
    if extra_id != _EXTRA_ID or extra_size != 8:
        problems.append(
            f"extra field 0x{extra_id:04x} of {extra_size} bytes (expected 0xca0c of 8 bytes)"
        )
    if problems:
        raise CozipFormatError(
            f"{where}: bytes 0..50 are not a CoZIP index header: " + "; ".join(problems)
        )
    (stored,) = struct.unpack_from("<Q", head, 43)
    return CozipHeader(index_size=csize, stored_hash=stored)


def parse_index(payload: bytes, where: str) -> CozipIndex:
    """The index from its payload (the bytes at ``[51, 51 + index_size)``).

    Raises:
        CozipFormatError: bad magic, unsupported version, truncated sections,
            empty, duplicate or non-UTF-8 names, zero sizes, or offsets that
            overflow.

    Example:
        >>> parse_index(b"CZIP" + bytes([1, 0, 2, 0, 0, 0, 0]), "x.zip").profile
        2
    """
    if len(payload) < _INDEX_HEADER.size:
        raise _truncated(where, _INDEX_HEADER.size, len(payload), "the 11-byte index header")
    magic, version, profile, count = _INDEX_HEADER.unpack_from(payload)
    if magic != MAGIC:
        raise CozipFormatError(
            f"{where}: expected index magic {MAGIC!r} at byte {INDEX_OFFSET}, found {magic!r}"
        )
    if version > VERSION:
        raise CozipFormatError(
            f"{where}: index version {version} at byte {INDEX_OFFSET + 4}; this reader "
            f"supports version {VERSION}"
        )
    at = _INDEX_HEADER.size
    need = at + 2 * count
    if len(payload) < need:
        raise _truncated(where, need, len(payload), f"{count} name lengths")
    lengths = struct.unpack_from(f"<{count}H", payload, at)
    at = need
    need = at + sum(lengths) + 16 * count
    if len(payload) < need:
        raise _truncated(where, need, len(payload), f"{count} names, offsets and sizes")
    names = []
    for position, length in enumerate(lengths):
        raw = payload[at : at + length]
        at += length
        if length == 0:
            raise CozipFormatError(f"{where}: index entry {position} has an empty name")
        try:
            name = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CozipFormatError(
                f"{where}: index entry {position}: expected a UTF-8 name, found {raw!r}"
            ) from exc
        names.append(name)
    offsets = struct.unpack_from(f"<{count}Q", payload, at)
    sizes = struct.unpack_from(f"<{count}Q", payload, at + 8 * count)
    if len(set(names)) != len(names) or INDEX_NAME.decode() in names:
        raise CozipFormatError(f"{where}: index names must be unique and not __cozip__: {names}")
    entries = []
    for name, offset, size in zip(names, offsets, sizes, strict=True):
        if size == 0 or offset + size > _MASK:
            raise CozipFormatError(
                f"{where}: index entry {name!r}: expected size > 0 and offset + size < 2**64, "
                f"found offset {offset}, size {size}"
            )
        entries.append(CozipEntry(name, offset, size))
    return CozipIndex(version=version, profile=profile, entries=tuple(entries))


def _truncated(where: str, need: int, found: int, what: str) -> CozipFormatError:
    return CozipFormatError(
        f"{where}: index truncated: {what} need {need} bytes of index payload, found {found}"
    )


def fnv1a64(data: bytes | memoryview, state: int = _FNV_OFFSET) -> int:
    """FNV-1a 64 of ``data``, continuing from ``state``.

    Example:
        >>> hex(fnv1a64(b"a"))
        '0xaf63dc4c8601ec8c'
    """
    h = state
    for byte in bytes(data):
        h = ((h ^ byte) * _FNV_PRIME) & _MASK
    return h


def hash_ranges(header: CozipHeader, archive_size: int, where: str) -> list[tuple[int, int]]:
    """The archive byte ranges ``[start, end)`` the integrity hash covers, overlaps merged.

    Raises:
        CozipFormatError: the archive is smaller than 32768 + 51 bytes, or the
            index reaches past its end.

    Example:
        >>> hash_ranges(CozipHeader(100, 0), 40000, "x.zip")
        [(51, 151), (7232, 40000)]
    """
    if archive_size < HASH_WINDOW + INDEX_OFFSET:
        raise CozipFormatError(
            f"{where}: expected a CoZIP archive of at least {HASH_WINDOW + INDEX_OFFSET} bytes, "
            f"found {archive_size}"
        )
    if header.index_end > archive_size:
        raise CozipFormatError(
            f"{where}: the index ends at byte {header.index_end}, past the archive's "
            f"{archive_size} bytes"
        )
    suffix = archive_size - HASH_WINDOW
    if header.index_end >= suffix:
        return [(INDEX_OFFSET, archive_size)]
    return [(INDEX_OFFSET, header.index_end), (suffix, archive_size)]


def verify_hash(header: CozipHeader, parts: list[bytes], where: str) -> None:
    """Compare the stored hash with FNV-1a 64 of ``parts`` (the bytes of :func:`hash_ranges`).

    Raises:
        CozipFormatError: the hashes differ (``HASH_MISMATCH``).

    Example:
        >>> verify_hash(CozipHeader(1, fnv1a64(b"a")), [b"a"], "x.zip")
    """
    state = _FNV_OFFSET
    for part in parts:
        state = fnv1a64(part, state)
    if state != header.stored_hash:
        raise CozipFormatError(
            f"{where}: CoZIP integrity hash mismatch (HASH_MISMATCH): bytes 43..50 store "
            f"0x{header.stored_hash:016x}, the index and the last {HASH_WINDOW} bytes hash to "
            f"0x{state:016x}; the archive was modified or truncated"
        )


MAX_EXTRA: Final = 1024
"""Longest local-header extra field :func:`check_entries` looks behind (ZIP64 needs 20)."""


def _header_start(data: bytes, payload: int, name: bytes) -> int | None:
    """Where the local header of the entry whose payload starts at ``payload`` begins."""
    for extra in range(0, min(payload, MAX_EXTRA) + 1):
        start = payload - extra - len(name) - 30
        if start < 0:
            return None
        if (
            data[start : start + 4] == _LFH_SIGNATURE
            and data[start + 30 : start + 30 + len(name)] == name
            and struct.unpack_from("<HH", data, start + 26) == (len(name), extra)
        ):
            return start
    return None


def check_entries(
    data: bytes, base: int, entries: tuple[CozipEntry, ...], contiguous: bool, where: str
) -> None:
    """The index agrees with the ZIP entries in ``data`` (archive bytes from ``base`` on).

    Each priority payload must follow the local header of a ZIP entry of the
    same name, STORE, with sizes equal to the index's (``MISSING_ENTRY``); with
    ``contiguous`` (the TACO profile, CoZIP §14.3) the entries must also form
    one block, each local header starting where the previous payload ends.

    Raises:
        CozipFormatError: an entry does not match its ZIP entry, or the block has a gap.

    Example:
        >>> check_entries(b"", 0, (), True, "x.zip")
    """
    previous_end: int | None = None
    for entry in sorted(entries, key=lambda e: e.offset):
        name = entry.name.encode("utf-8")
        start = _header_start(data, entry.offset - base, name)
        if start is None:
            raise CozipFormatError(
                f"{where}: index entry {entry.name!r} at byte {entry.offset}: expected the "
                f"local header of a ZIP entry of that name right before it, found none "
                "(MISSING_ENTRY)"
            )
        method, _t, _d, _crc, csize, usize = struct.unpack_from("<HHHIII", data, start + 8)
        sizes_known = csize != 0xFFFFFFFF and usize != 0xFFFFFFFF
        if method != 0 or (sizes_known and not csize == usize == entry.size):
            raise CozipFormatError(
                f"{where}: index entry {entry.name!r}: expected a STORE entry of {entry.size} "
                f"bytes, found method {method}, sizes {csize}/{usize} (MISSING_ENTRY)"
            )
        if contiguous and previous_end is not None and start + base != previous_end:
            raise CozipFormatError(
                f"{where}: TACO priority files must be one contiguous block (CoZIP §14.3): "
                f"{entry.name!r}'s local header starts at byte {start + base}, the previous "
                f"priority payload ends at byte {previous_end}"
            )
        previous_end = entry.end
