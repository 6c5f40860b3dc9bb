"""Tar members as TARIDX sees them: stem and extension of a name, one 512-byte header.

TARIDX (like the iTar code it comes from) keys a member by its *stem*: the
base name up to its first dot; the rest of the base name, lowercased, is the
extension.  ``train/000123.rgb.tif`` has stem ``000123`` and extension
``rgb.tif``.  Members with one stem form one webdataset-style sample.
"""

from __future__ import annotations

from dataclasses import dataclass

from taco_taridx.layout import TAR_BLOCK, TaridxFormatError
from taco_taridx.xxh64 import xxh64

__all__ = ["TarMember", "key_hash", "parse_member_header", "split_name"]


def split_name(name: str) -> tuple[str, str]:
    """``(stem, extension)`` of a member name.

    Example:
        >>> split_name("train/000123.RGB.tif")
        ('000123', 'rgb.tif')
    """
    base = name.rsplit("/", 1)[-1]
    stem, _, ext = base.partition(".")
    return stem, ext.lower()


def key_hash(stem: str) -> int:
    """``xxh64`` of the UTF-8 stem (undecodable name bytes kept as they were).

    Example:
        >>> hex(key_hash("abc"))
        '0x44bc2cf5ad770999'
    """
    return xxh64(stem.encode("utf-8", "surrogateescape"))


@dataclass(frozen=True, slots=True)
class TarMember:
    """What one ustar header block says: the member's name and payload size."""

    name: str
    size: int


def parse_member_header(block: bytes, where: str) -> TarMember:
    """Name and size from the 512-byte tar header block a TARIDX row points at.

    Raises:
        TaridxFormatError: the block is not a valid tar header (wrong checksum,
            zeros, short).
    """
    import tarfile  # imported when a TARIDX is read, not when load() asks the plugins

    try:
        info = tarfile.TarInfo.frombuf(block[:TAR_BLOCK], "utf-8", "surrogateescape")
    except tarfile.HeaderError as exc:
        raise TaridxFormatError(
            f"{where}: expected a {TAR_BLOCK}-byte tar header, cannot parse it ({exc})"
        ) from exc
    return TarMember(info.name, info.size)
