"""TACO v1 byte layout: the tortilla / TACO header, pure parsing, no I/O.

A v1 file (tacotoolbox 0.5 ``.taco``, pytortilla ``.tortilla``) starts with::

    bytes 0..1    magic: b"WX" (TACO) or b"#y" (tortilla)
    bytes 2..9    footer offset (u64 LE, from the start of this tortilla)
    bytes 10..17  footer length (u64 LE)
    bytes 18..25  number of data partitions (u64 LE)
    bytes 26..33  TACO only: COLLECTION offset (u64 LE; the size of the tortilla)
    bytes 34..41  TACO only: COLLECTION length (u64 LE)
    ... zeros up to byte 200, where the first sample's bytes start

The footer is a parquet table with one row per sample (``tortilla:id``,
``tortilla:file_format``, ``tortilla:offset``, ``tortilla:length``, metadata);
a sample whose format is ``TORTILLA`` is itself a tortilla embedded at its
offset, whose footer offsets count from its own start.  The COLLECTION is UTF-8
JSON after the footer.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Final, Literal

from taco_gdal.containers import TacoFormatError

__all__ = [
    "DATA_START",
    "HEADER_SIZE",
    "MAGIC_TACO",
    "MAGIC_TORTILLA",
    "TACO_HEADER_SIZE",
    "V1FormatError",
    "V1Header",
    "looks_like_v1",
    "parse_header",
]

MAGIC_TACO: Final = b"WX"
MAGIC_TORTILLA: Final = b"#y"
HEADER_SIZE: Final = 18
"""Magic, footer offset and footer length: what every v1 reader reads first."""
TACO_HEADER_SIZE: Final = 42
"""A TACO's header also holds the partition count and the COLLECTION's offset and length."""
DATA_START: Final = 200
_U64: Final = struct.Struct("<Q")

Kind = Literal["taco", "tortilla"]


class V1FormatError(TacoFormatError):
    """A TACO v1 / tortilla header or footer that does not follow the v1 layout."""


@dataclass(frozen=True, slots=True)
class V1Header:
    """A parsed v1 header.  Offsets are relative to the tortilla's first byte.

    Example:
        >>> V1Header("tortilla", 630, 2000, 1, None, None).footer_end
        2630
    """

    kind: Kind
    footer_offset: int
    footer_length: int
    partitions: int
    collection_offset: int | None
    collection_length: int | None

    @property
    def footer_end(self) -> int:
        """First byte after the footer."""
        return self.footer_offset + self.footer_length


def looks_like_v1(head: bytes) -> bool:
    """Whether the first bytes carry a v1 magic (no validation).

    Example:
        >>> looks_like_v1(b"WX" + bytes(40))
        True
    """
    return head[:2] in (MAGIC_TACO, MAGIC_TORTILLA) and len(head) >= HEADER_SIZE


def parse_header(head: bytes, where: str, size: int | None = None) -> V1Header:
    """The header at the start of ``head`` (18 bytes, 42 for a TACO).

    Args:
        head: the first bytes of the tortilla.
        where: named in messages (file and byte offset).
        size: bytes available from the tortilla's start, when known: offsets
            past it are refused.

    Raises:
        V1FormatError: bad magic, truncated header, a footer or COLLECTION
            that starts inside the header or reaches past ``size``.

    Example:
        >>> parse_header(b"#y" + (300).to_bytes(8, "little") + (50).to_bytes(8, "little"),
        ...              "x.tortilla").footer_offset
        300
    """
    magic = head[:2]
    if magic not in (MAGIC_TACO, MAGIC_TORTILLA):
        raise V1FormatError(
            f"{where}: expected a TACO v1 magic {MAGIC_TACO!r} or tortilla magic "
            f"{MAGIC_TORTILLA!r} at byte 0, found {magic!r}"
        )
    kind: Kind = "taco" if magic == MAGIC_TACO else "tortilla"
    need = TACO_HEADER_SIZE if kind == "taco" else HEADER_SIZE
    if len(head) < need:
        raise V1FormatError(
            f"{where}: expected a {need}-byte {kind} header, found only {len(head)} bytes"
        )
    footer_offset, footer_length = _U64.unpack_from(head, 2)[0], _U64.unpack_from(head, 10)[0]
    partitions = _U64.unpack_from(head, 18)[0] if len(head) >= 26 else 1
    _check_span(where, "footer", footer_offset, footer_length, size)
    collection_offset = collection_length = None
    if kind == "taco":
        collection_offset = _U64.unpack_from(head, 26)[0]
        collection_length = _U64.unpack_from(head, 34)[0]
        _check_span(where, "COLLECTION", collection_offset, collection_length, size)
    return V1Header(
        kind, footer_offset, footer_length, partitions, collection_offset, collection_length
    )


def _check_span(where: str, what: str, offset: int, length: int, size: int | None) -> None:
    if offset < HEADER_SIZE or length == 0:
        raise V1FormatError(
            f"{where}: expected the {what} after the header and non-empty, found offset "
            f"{offset}, length {length}"
        )
    if size is not None and offset + length > size:
        raise V1FormatError(
            f"{where}: the {what} covers bytes {offset}..{offset + length}, past the "
            f"{size} bytes available"
        )
