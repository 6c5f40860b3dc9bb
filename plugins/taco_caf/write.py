"""Write a CAF archive: member bytes copied as-is, then the JSON index and the footer."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import BinaryIO, Final

import taco_gdal.containers as contract
from taco_caf.layout import (
    FOOTER_SIZE,
    MAX_ARCHIVE_SIZE,
    CafIndex,
    CafMember,
    pack_footer,
    pack_index,
)
from taco_gdal.containers import TacoValidationError, VSIFile, file_size, to_vsi

__all__ = ["write_caf"]

PathArg = str | os.PathLike[str]
_BLOCK: Final = 4 * 1024 * 1024


def _entries(files: Mapping[str, PathArg] | Iterable[PathArg]) -> list[tuple[str, str]]:
    """``(member name, GDAL path)`` pairs; a plain list is named by base names."""
    if isinstance(files, Mapping):
        pairs = [(str(name), to_vsi(source)) for name, source in files.items()]
    else:
        paths = [to_vsi(source) for source in files]
        pairs = [(posixpath.basename(path), path) for path in paths]
    seen: set[str] = set()
    for name, source in pairs:
        if not name or name in seen:
            raise TacoValidationError(
                f"write_caf: member names must be unique and non-empty; {name!r} (from "
                f"{source!r}) is {'empty' if not name else 'repeated'}"
            )
        seen.add(name)
    if not pairs:
        raise TacoValidationError("write_caf: expected at least one file, got none")
    return pairs


def _copy(source: str, size: int, out: BinaryIO) -> None:
    with VSIFile(source) as f:
        for offset in range(0, size, _BLOCK):
            out.write(f.read_exact(offset, min(_BLOCK, size - offset), "member data"))


def write_caf(
    files: Mapping[str, PathArg] | Iterable[PathArg],
    output: PathArg,
    overwrite: bool = False,
) -> Path:
    """Write ``files`` into one CAF 1.0 archive, in the order given.

    Sources are read through GDAL's VSI layer (local, ``/vsicurl/``, ``s3://``,
    ``/vsisubfile/`` ...) and copied byte for byte.  The output appears only
    when complete and never replaces an existing file unless ``overwrite``.

    Args:
        files: ``{member name: source}``, or sources named by their base names.
        output: the archive to write (``.caf`` makes it loadable by name).
        overwrite: replace an existing output.

    Returns:
        The path written.

    Raises:
        TacoValidationError: no files, a repeated or empty name, or more than
            the spec's 32 GiB in one archive.
        TacoExistsError: ``output`` exists and ``overwrite`` is False.
        TacoIOError: a source cannot be read.

    Example:
        >>> write_caf({"a.tif": "src/s000.tif", "b.tif": "src/s001.tif"}, "two.caf")
        PosixPath('two.caf')
    """
    entries = _entries(files)
    sizes = [file_size(source) for _, source in entries]
    members: list[CafMember] = []
    position = 0
    for (name, _), size in zip(entries, sizes, strict=True):
        members.append(CafMember(name, position, position + size))
        position += size
    index = pack_index(CafIndex(tuple(members)))
    total = position + len(index) + FOOTER_SIZE
    if total > MAX_ARCHIVE_SIZE:
        raise TacoValidationError(
            f"write_caf: {len(entries)} files make a {total}-byte archive; a CAF chunk may "
            f"hold at most {MAX_ARCHIVE_SIZE} bytes (32 GiB): split the files"
        )
    with contract.atomic_file(output, overwrite) as out:  # imports the writer when called
        for (_, source), size in zip(entries, sizes, strict=True):
            _copy(source, size, out)
        out.write(index)
        out.write(pack_footer(len(index)))
    return Path(output)
