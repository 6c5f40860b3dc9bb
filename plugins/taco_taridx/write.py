"""Build a ``.taridx`` from local tar shards with the stdlib ``tarfile`` offsets."""

from __future__ import annotations

import os
import tarfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final

import numpy as np

import taco_gdal.containers as contract
from taco_gdal.containers import TacoIOError
from taco_taridx.layout import ROW_DTYPE, TAR_BLOCK, TaridxFormatError, TaridxIndex, pack_index
from taco_taridx.members import key_hash, parse_member_header, split_name

__all__ = ["build_index", "write_taridx"]

PathArg = str | os.PathLike[str]
_U16: Final = 0xFFFF


class _Builder:
    """Rows in tar order; extension and crash ids in order of first appearance (as iTar)."""

    def __init__(self) -> None:
        self.ext_ids: dict[str, int] = {}
        self.crash_ids: dict[str, int] = {}
        self.canonical: dict[int, str] = {}
        self.stems: set[str] = set()
        self.rows: list[tuple[int, int, int, int, int, int]] = []

    def add(self, fid: int, name: str, header_offset: int, size: int) -> None:
        stem, ext = split_name(name)
        key = key_hash(stem)
        extid = self.ext_ids.setdefault(ext, len(self.ext_ids))
        if extid > _U16:
            raise TaridxFormatError(f"member {name!r}: more than {_U16 + 1} extensions")
        canonical = self.canonical.setdefault(key, stem)
        crashid = (
            0 if canonical == stem else self.crash_ids.setdefault(stem, len(self.crash_ids) + 1)
        )
        self.stems.add(stem)
        self.rows.append((fid, header_offset, size, extid, crashid, key))

    def index(self) -> TaridxIndex:
        return TaridxIndex(
            extensions=tuple(self.ext_ids),
            crash_stems=tuple(self.crash_ids),
            rows=np.array(self.rows, dtype=ROW_DTYPE),
            n_stems=len(self.stems),
        )


def _members(path: Path) -> Iterator[tuple[str, int, int]]:
    """``(name, header offset, size)`` of every regular file of an uncompressed tar."""
    try:
        with tarfile.open(path, "r:") as tar, open(path, "rb") as raw:
            for info in tar:
                if not info.isfile():
                    continue
                header_offset = info.offset_data - TAR_BLOCK
                raw.seek(header_offset)
                found = parse_member_header(raw.read(TAR_BLOCK), f"{path}: byte {header_offset}")
                if found.name != info.name:
                    raise TaridxFormatError(
                        f"{path}: member {info.name!r}: the header block before its data "
                        f"(byte {header_offset}) names {found.name!r}; TARIDX rows point at that "
                        "block, so long names kept in pax/GNU extension headers cannot be indexed"
                    )
                yield info.name, header_offset, info.size
    except tarfile.ReadError as exc:
        raise TaridxFormatError(
            f"{path}: expected an uncompressed tar, cannot read it: {exc}"
        ) from exc
    except OSError as exc:
        raise TacoIOError(f"cannot read tar shard {str(path)!r}: {exc}") from exc


def build_index(tar_paths: PathArg | Sequence[PathArg]) -> TaridxIndex:
    """The TARIDX index of local tar shards; shard ``fid`` is the position in ``tar_paths``.

    One row per regular file, in tar order, at the offset of the header block
    just before its data (``offset + 512`` is the payload, as the spec says).

    Raises:
        TaridxFormatError: not an uncompressed tar, a member named only in a
            pax/GNU long-name header, more than 65536 shards or extensions.
        TacoIOError: a shard cannot be read.

    Example:
        >>> build_index("train_0000.tar").n_stems
        2
    """
    paths = [tar_paths] if isinstance(tar_paths, str | os.PathLike) else list(tar_paths)
    if len(paths) > _U16 + 1:
        raise TaridxFormatError(
            f"TARIDX fid is a uint16: at most {_U16 + 1} shards, got {len(paths)}"
        )
    builder = _Builder()
    for fid, path in enumerate(paths):
        for name, offset, size in _members(Path(path)):
            builder.add(fid, name, offset, size)
    return builder.index()


def write_taridx(
    tar_paths: PathArg | Sequence[PathArg], output: PathArg, overwrite: bool = False
) -> Path:
    """Index local tar shards into a ``.taridx`` file.

    The reader finds shard ``fid`` next to the index: ``{name}.tar`` for a
    single shard of ``{name}.taridx``, else the ``fid``-th of ``{name}_*.tar``
    sorted by suffix (iTar's fold layout, e.g. ``train_0000.tar``,
    ``train_0001.tar`` for ``train.taridx``); pass shards in that order.

    Args:
        tar_paths: one tar, or the shards in ``fid`` order.
        output: the ``.taridx`` to write.
        overwrite: replace an existing output.

    Returns:
        The path written.

    Raises:
        TaridxFormatError: see :func:`build_index`.
        TacoExistsError: ``output`` exists and ``overwrite`` is False.

    Example:
        >>> write_taridx(["train_0000.tar", "train_0001.tar"], "shards.taridx")
        PosixPath('shards.taridx')
    """
    data = pack_index(build_index(tar_paths))
    with contract.atomic_file(output, overwrite) as out:  # imports the writer when called
        out.write(data)
    return Path(output)
