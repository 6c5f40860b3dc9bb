"""GDAL virtual file system paths: one module builds and parses all of them.

``to_vsi`` turns a user location (path, URL, ``s3://``...) into the path GDAL
opens. In ``/vsisubfile/{offset}_{size},{path}`` the path is everything after
the first comma, so container paths with commas survive the round trip.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from typing import Final

from taco_gdal.errors import TacoFormatError

__all__ = [
    "SubfilePath",
    "build_subfile",
    "is_remote",
    "join",
    "parent",
    "parse_subfile",
    "to_vsi",
]

SUBFILE_PREFIX: Final = "/vsisubfile/"

_SCHEMES: Final = {
    "http://": "/vsicurl/",
    "https://": "/vsicurl/",
    "s3://": "/vsis3/",
    "gs://": "/vsigs/",
    "gcs://": "/vsigs/",
    "az://": "/vsiaz/",
    "azure://": "/vsiaz/",
    "abfs://": "/vsiaz/",
    "oss://": "/vsioss/",
    "swift://": "/vsiswift/",
}
_REMOTE_PREFIXES: Final = (
    *dict.fromkeys(_SCHEMES.values()),
    "/vsiadls/",
    "/vsihdfs/",
    "/vsiwebhdfs/",
)


def to_vsi(path: str | os.PathLike[str]) -> str:
    """The GDAL path for a user-facing location.

    Example:
        >>> to_vsi("s3://bucket/data.tacozip")
        '/vsis3/bucket/data.tacozip'
        >>> to_vsi("https://host/x.tacozip")
        '/vsicurl/https://host/x.tacozip'
    """
    text = os.fspath(path)
    if text.startswith("/vsi"):
        return text
    lowered = text.lower()
    for scheme, prefix in _SCHEMES.items():
        if lowered.startswith(scheme):
            if prefix == "/vsicurl/":
                return prefix + text
            return prefix + text[len(scheme) :]
    if lowered.startswith("file://"):
        text = text[len("file://") :]
    return os.path.abspath(os.path.expanduser(text))


def is_remote(vsi_path: str) -> bool:
    """True when reading ``vsi_path`` goes over the network (also through /vsisubfile/)."""
    inner = parse_subfile(vsi_path).container if vsi_path.startswith(SUBFILE_PREFIX) else vsi_path
    return inner.startswith(_REMOTE_PREFIXES)


@dataclass(frozen=True, slots=True)
class SubfilePath:
    """A parsed ``/vsisubfile/{offset}_{size},{container}`` path."""

    offset: int
    size: int
    container: str

    def __str__(self) -> str:
        return build_subfile(self.offset, self.size, self.container)


def build_subfile(offset: int, size: int, container: str) -> str:
    """``/vsisubfile/{offset}_{size},{container}``; the container must be a VSI path."""
    if offset < 0 or size < 0:
        raise TacoFormatError(
            f"/vsisubfile/ offset and size must be >= 0, got offset={offset} size={size} "
            f"for {container}"
        )
    return f"{SUBFILE_PREFIX}{offset}_{size},{container}"


def parse_subfile(path: str) -> SubfilePath:
    """Split a ``/vsisubfile/`` path into offset, size and container (TacoFormatError if bad)."""
    if not path.startswith(SUBFILE_PREFIX):
        raise TacoFormatError(f"not a /vsisubfile/ path (missing prefix): {path!r}")
    body = path[len(SUBFILE_PREFIX) :]
    span, comma, container = body.partition(",")
    if not comma:
        raise TacoFormatError(
            f"/vsisubfile/ path has no ',' between '{{offset}}_{{size}}' and the file: {path!r}"
        )
    offset_text, underscore, size_text = span.partition("_")
    if not underscore:
        raise TacoFormatError(
            f"/vsisubfile/ path needs '{{offset}}_{{size}}' before the comma, found {span!r}: "
            f"{path!r}"
        )
    if not (offset_text.isdigit() and size_text.isdigit()):
        raise TacoFormatError(
            f"/vsisubfile/ offset and size must be non-negative integers, found "
            f"{offset_text!r} and {size_text!r}: {path!r}"
        )
    if not container:
        raise TacoFormatError(f"/vsisubfile/ path names no container file: {path!r}")
    return SubfilePath(int(offset_text), int(size_text), container)


def join(base: str, *parts: str) -> str:
    """Join path components with ``/`` (VSI paths always use forward slashes)."""
    out = base
    for part in parts:
        if not part:
            continue
        out = out.rstrip("/") + "/" + part.lstrip("/") if out else part
    return out


def parent(vsi_path: str) -> str:
    """The directory holding ``vsi_path`` (no trailing slash)."""
    stripped = vsi_path.rstrip("/")
    if stripped.startswith("/vsicurl/"):
        inner = stripped[len("/vsicurl/") :]
        return "/vsicurl/" + inner.rsplit("/", 1)[0]
    return posixpath.dirname(stripped)
