"""How TACO metadata maps to STAC fields, both ways: one place for the export and the import.

STAC keeps a raster's grid in the projection extension (``proj:code``,
``proj:shape`` = rows, cols; ``proj:transform`` = the affine in rasterio's
order), its size and digest in the file extension (``file:size``,
``file:checksum`` as a multihash), and a member's byte range inside a container
in the archive extension (``archive:start`` / ``archive:end``, first and last
byte, both inclusive).  The field names come from pystac's extension modules
(the ``stac`` extra); the archive extension has no pystac module, so its names
are defined here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from types import ModuleType
from typing import Final

from taco_gdal.errors import TacoDependencyError, TacoFormatError
from taco_gdal.format.checksum import parse_checksum

__all__ = [
    "ARCHIVE_END",
    "ARCHIVE_FORMAT",
    "ARCHIVE_SCHEMA",
    "ARCHIVE_START",
    "INSTALL_HINT",
    "from_multihash",
    "geotransform_of",
    "proj_transform_of",
    "require_stac",
    "to_multihash",
]

INSTALL_HINT: Final = "pip install 'taco_gdal[stac]'"
ARCHIVE_SCHEMA: Final = "https://stac-extensions.github.io/archive/v1.0.0/schema.json"
ARCHIVE_START: Final = "archive:start"
ARCHIVE_END: Final = "archive:end"
ARCHIVE_FORMAT: Final = "archive:format"

# Multihash prefixes (the varint of the multicodec code, then the digest length):
# sha2-256 is 0x12, xxh3-64 is 0xb3e3.  CRC-32C has no multicodec code.
_MULTIHASH: Final = {"sha256": "1220", "xxh3": "e3e70208"}
_HEX: Final = re.compile(r"[0-9a-f]+")


def require_stac(what: str) -> ModuleType:
    """The ``pystac`` module, or a TacoDependencyError saying how to install the ``stac`` extra."""
    try:
        import pystac
    except ImportError as exc:
        raise TacoDependencyError(
            f"{what} needs pystac: expected an importable 'pystac' module, found none ({exc}); "
            f"install it with: {INSTALL_HINT}"
        ) from exc
    return pystac


def to_multihash(stored: str | None) -> str | None:
    """A stored ``taco_gdal:checksum`` as a hex multihash, or None when it has no multihash code.

    SHA-256 and XXH3-64 have multicodec codes; CRC-32C has none, so its digest
    is left out of STAC rather than written under a code that means another hash.

    Example:
        >>> to_multihash("sha256:" + "ab" * 32)[:8]
        '1220abab'
        >>> to_multihash("crc32c:e3069283") is None
        True
    """
    if stored is None:
        return None
    digest = parse_checksum(stored)
    prefix = _MULTIHASH.get(digest.algorithm)
    return None if prefix is None else prefix + digest.hexdigest


def from_multihash(value: object, where: str) -> str | None:
    """The ``taco_gdal:checksum`` form of a ``file:checksum`` multihash; None for other hashes.

    Raises:
        TacoFormatError: ``value`` is not a hex string.

    Example:
        >>> from_multihash("1220" + "ab" * 32, "item x")[:12]
        'sha256:ababa'
    """
    if not isinstance(value, str) or not _HEX.fullmatch(value.lower()):
        raise TacoFormatError(f"{where}: file:checksum must be a hex multihash, found {value!r}")
    text = value.lower()
    for algorithm, prefix in _MULTIHASH.items():
        if text.startswith(prefix):
            return str(parse_checksum(f"{algorithm}:{text[len(prefix) :]}", where))
    return None


def proj_transform_of(geotransform: Sequence[float]) -> list[float]:
    """GDAL's geotransform ``(c, a, b, f, d, e)`` as ``proj:transform`` ``[a, b, c, d, e, f]``.

    Example:
        >>> proj_transform_of([500000.0, 10.0, 0.0, 4e6, 0.0, -10.0])
        [10.0, 0.0, 500000.0, 0.0, -10.0, 4000000.0]
    """
    c, a, b, f, d, e = (float(v) for v in geotransform)
    return [a, b, c, d, e, f]


def geotransform_of(transform: Sequence[float], where: str) -> list[float]:
    """``proj:transform`` (6 or 9 numbers, rasterio order) as GDAL's geotransform.

    Raises:
        TacoFormatError: not 6 or 9 numbers.

    Example:
        >>> geotransform_of([10.0, 0.0, 500000.0, 0.0, -10.0, 4e6], "item x")
        [500000.0, 10.0, 0.0, 4000000.0, 0.0, -10.0]
    """
    try:
        values = [float(v) for v in transform]
    except (TypeError, ValueError) as exc:
        raise TacoFormatError(
            f"{where}: proj:transform must be numbers, found {transform!r}"
        ) from exc
    if len(values) not in (6, 9):
        raise TacoFormatError(
            f"{where}: proj:transform must hold 6 or 9 numbers, found {len(values)}"
        )
    a, b, c, d, e, f = values[:6]
    return [c, a, b, f, d, e]
