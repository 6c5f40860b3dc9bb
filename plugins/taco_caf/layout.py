"""CAF 1.0 byte layout: member data, a JSON index, a 4-byte footer (no I/O here).

::

    [member 0][member 1]...[index: UTF-8 JSON][footer: uint32 LE = index size]

The index is ``{"format_version": "1.0", "files": {name: {"start_byte": s,
"end_byte": e}}}`` with ``e`` exclusive (the spec's field description; its
example block shows inclusive-looking numbers and trailing commas, which are not
JSON, and the reference TypeScript writer uses exclusive ends).  Members are
concatenated without gaps, so the index starts where the data section ends.

Every parser raises :class:`CafFormatError` naming what it expected, what it
found and where.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeGuard

from taco_gdal.containers import TacoFormatError, loads_json

__all__ = [
    "FOOTER_SIZE",
    "FORMAT_VERSION",
    "MAX_ARCHIVE_SIZE",
    "MAX_INDEX_SIZE",
    "CafFormatError",
    "CafIndex",
    "CafMember",
    "index_start",
    "pack_footer",
    "pack_index",
    "parse_footer",
    "parse_index",
]

FOOTER_SIZE: Final = 4
FORMAT_VERSION: Final = "1.0"
MAX_INDEX_SIZE: Final = 2**32 - 1
"""The footer is a uint32."""
MAX_ARCHIVE_SIZE: Final = 32 * 1024**3
"""The spec's hard limit on a chunk ("32GB"), read as GiB like the reference writer."""


class CafFormatError(TacoFormatError):
    """A CAF archive whose footer, index or member ranges break the CAF 1.0 layout."""


@dataclass(frozen=True, slots=True)
class CafMember:
    """One member: its name and its bytes ``[start, end)`` in the archive.

    Example:
        >>> CafMember("a.tif", 10, 30).size
        20
    """

    name: str
    start: int
    end: int

    @property
    def size(self) -> int:
        return self.end - self.start


@dataclass(frozen=True, slots=True)
class CafIndex:
    """The parsed JSON index: members in the order the index lists them.

    Example:
        >>> CafIndex((CafMember("a", 0, 3),)).names
        ('a',)
    """

    members: tuple[CafMember, ...]
    format_version: str = FORMAT_VERSION

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(member.name for member in self.members)

    @property
    def data_size(self) -> int:
        """Bytes of the data section: the end of the last member (0 when empty)."""
        return max((member.end for member in self.members), default=0)


def pack_footer(index_size: int) -> bytes:
    """The 4-byte footer.

    Example:
        >>> pack_footer(258)
        b'\\x02\\x01\\x00\\x00'
    """
    if not 0 <= index_size <= MAX_INDEX_SIZE:
        raise CafFormatError(
            f"CAF footer: the index size must fit a uint32 (0..{MAX_INDEX_SIZE}), got {index_size}"
        )
    return index_size.to_bytes(FOOTER_SIZE, "little")


def parse_footer(footer: bytes, file_size: int, where: str) -> int:
    """The index size from the last 4 bytes of a ``file_size``-byte archive.

    Raises:
        CafFormatError: the file is shorter than a footer, or the index it
            announces does not fit in front of the footer.

    Example:
        >>> parse_footer(pack_footer(2), 6, "x.caf")
        2
    """
    if file_size < FOOTER_SIZE or len(footer) != FOOTER_SIZE:
        raise CafFormatError(
            f"{where}: a CAF archive ends with a {FOOTER_SIZE}-byte footer; the file has "
            f"{file_size} bytes (truncated?)"
        )
    index_size = int.from_bytes(footer, "little")
    if index_size > file_size - FOOTER_SIZE:
        raise CafFormatError(
            f"{where}: the footer (last {FOOTER_SIZE} bytes) announces a {index_size}-byte "
            f"index, but only {file_size - FOOTER_SIZE} bytes precede it (file size "
            f"{file_size}; truncated file or not a CAF archive)"
        )
    return index_size


def index_start(file_size: int, index_size: int) -> int:
    """Offset of the JSON index (= size of the data section)."""
    return file_size - FOOTER_SIZE - index_size


def pack_index(index: CafIndex) -> bytes:
    """The JSON index, compact UTF-8 (as ``JSON.stringify`` in the reference writer).

    Example:
        >>> pack_index(CafIndex((CafMember("a", 0, 3),)))
        b'{"format_version":"1.0","files":{"a":{"start_byte":0,"end_byte":3}}}'
    """
    _check_unique(index.names, "CAF index")
    files = {m.name: {"start_byte": m.start, "end_byte": m.end} for m in index.members}
    document = {"format_version": index.format_version, "files": files}
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _check_unique(names: Iterable[str], where: str) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise CafFormatError(
                f"{where}: key {name!r} appears twice; member names (and the fields of "
                "an entry) must be unique"
            )
        seen.add(name)


def _no_duplicate_keys(pairs: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    _check_unique((key for key, _ in pairs), "JSON object")
    return dict(pairs)


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _decode(data: bytes, where: str) -> dict[str, Any]:
    """The index as a dict, through the bounded JSON parser every container uses.

    Once the bounded parse accepted the text (depth and numbers within limits), it
    is read again for duplicate keys, which ``loads_json`` does not report.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CafFormatError(
            f"{where}: expected the CAF index as UTF-8 JSON, cannot parse it: {exc}"
        ) from exc
    try:
        document = loads_json(text, f"{where}: CAF index")
        json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except CafFormatError as exc:
        raise CafFormatError(f"{where}: {exc}") from exc
    except TacoFormatError as exc:
        raise CafFormatError(str(exc)) from exc
    if not isinstance(document, dict):
        raise CafFormatError(
            f"{where}: expected the CAF index to be a JSON object, found {type(document).__name__}"
        )
    return document


def _member(name: str, entry: object, data_size: int, where: str) -> CafMember:
    if not isinstance(entry, dict):
        raise CafFormatError(
            f"{where}: files[{name!r}] must be an object with start_byte/end_byte, found {entry!r}"
        )
    start, end = entry.get("start_byte"), entry.get("end_byte")
    if not (_is_int(start) and _is_int(end)):
        raise CafFormatError(
            f"{where}: files[{name!r}] needs integer start_byte and end_byte, found {entry!r}"
        )
    if not 0 <= start <= end <= data_size:
        raise CafFormatError(
            f"{where}: files[{name!r}] spans bytes {start}..{end}; expected "
            f"0 <= start_byte <= end_byte <= {data_size} (where the index begins)"
        )
    return CafMember(name, start, end)


def parse_index(data: bytes, data_size: int, where: str) -> CafIndex:
    """The members listed by the JSON index of an archive whose data section is ``data_size``.

    Raises:
        CafFormatError: not UTF-8 JSON, a duplicate name, an unknown major
            ``format_version``, missing fields, or a member outside the data section.

    Example:
        >>> parse_index(pack_index(CafIndex((CafMember("a", 0, 3),))), 3, "x.caf").names
        ('a',)
    """
    document = _decode(data, where)
    version = document.get("format_version")
    if not isinstance(version, str) or version.split(".")[0] != FORMAT_VERSION.split(".")[0]:
        raise CafFormatError(
            f"{where}: expected format_version {FORMAT_VERSION!r} (major 1), found {version!r}"
        )
    files = document.get("files")
    if not isinstance(files, dict):
        raise CafFormatError(
            f"{where}: expected 'files' to be an object of name -> byte range, found {files!r}"
        )
    members = tuple(_member(name, entry, data_size, where) for name, entry in files.items())
    return CafIndex(members, version)
