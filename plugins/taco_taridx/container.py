"""A ``.taridx`` as a taco_gdal container: one FILE sample per indexed tar member.

The container is the index; samples live in the tar shards beside it.  Shard
``fid`` is ``{name}.tar`` when ``{name}.taridx`` indexes one shard, else the
``fid``-th of ``{name}_*.tar`` sorted by suffix (iTar's fold layout; this needs
a folder listing, which GDAL offers locally and on object stores but not on
plain HTTP).  Rows become ``/vsisubfile/{offset + 512}_{size},{folder}/{shard}``
(VSI rule ``source_file``, the shard name in ``internal:source_file``).

TARIDX stores hashes, not names, so opening also reads the 512-byte tar header
each row points at (neighbouring headers are fetched in one range, at most
256 KiB at a time) and checks it against the row: a valid header, the same
size, a stem whose ``xxh64`` is the row's ``keyhash`` and the row's extension.
An index that does not describe its tar fails here, not at the first read.

Level-0 columns: ``id`` (member name), ``type`` (``FILE``), ``key`` (the
webdataset-style sample key: the stem), ``ext``, and the internal columns.
"""

from __future__ import annotations

import posixpath
from typing import Any, ClassVar, Final

import numpy as np
import pyarrow as pa

from taco_gdal.containers import (
    FILE,
    ID,
    OFFSET,
    SIZE,
    SOURCE_FILE,
    TYPE,
    OpenedContainer,
    Probe,
    VSIFile,
    VsiRule,
    derived_collection,
    join_vsi,
    parent_vsi,
    path_exists,
    read_all,
)
from taco_taridx.layout import MAGIC, TAR_BLOCK, Rows, TaridxFormatError, TaridxIndex, parse_index
from taco_taridx.members import TarMember, key_hash, parse_member_header, split_name

__all__ = [
    "EXT_COLUMN",
    "KEY_COLUMN",
    "LABEL",
    "SUFFIX",
    "TarIdxContainer",
    "member_table",
    "read_taridx",
    "shard_names",
]

SUFFIX: Final = ".taridx"
TAR_SUFFIX: Final = ".tar"
LABEL: Final = "TARIDX index"
KEY_COLUMN: Final = "key"
EXT_COLUMN: Final = "ext"
DESCRIPTIONS: Final = {
    KEY_COLUMN: "Sample key: the member's base name up to its first dot (TARIDX stem); "
    "members with one key form one webdataset-style sample.",
    EXT_COLUMN: "Extension: the member's base name after its first dot, lowercased.",
    SOURCE_FILE: "File name of the tar shard that holds the member.",
}
_MAX_READ: Final = 256 * 1024
"""Largest range read that fetches several neighbouring tar headers at once."""


def read_taridx(path: str) -> TaridxIndex:
    """The parsed ``.taridx`` at a GDAL path (one read of the whole index).

    Example:
        >>> read_taridx("train.taridx").n_stems
        4
    """
    return parse_index(read_all(path), path)


def _fold(path: str) -> str:
    """``train`` for ``.../train.taridx``."""
    name = posixpath.basename(path.rstrip("/"))
    return name[: -len(SUFFIX)] if name.lower().endswith(SUFFIX) else name


def shard_names(path: str, count: int) -> list[str]:
    """File names of shards ``0 .. count-1`` of the index at ``path``.

    Raises:
        TaridxFormatError: fewer shards found than the rows refer to.
    """
    folder, fold = parent_vsi(path), _fold(path)
    single = fold + TAR_SUFFIX
    if count <= 1 and path_exists(join_vsi(folder, single)):
        return [single]
    prefix = fold + "_"
    from osgeo import gdal  # here: importing the plugin (every load() does) needs no GDAL

    try:
        listing = gdal.ReadDir(folder) or []
    except RuntimeError:
        listing = []
    suffixes = {
        name[len(prefix) : -len(TAR_SUFFIX)]: name
        for name in listing
        if name.startswith(prefix) and name.endswith(TAR_SUFFIX)
    }
    names = [suffixes[suffix] for suffix in sorted(suffixes) if "_" not in suffix]
    if len(names) < count:
        raise TaridxFormatError(
            f"{path}: rows refer to {count} tar shard(s); expected {single} (one shard) or "
            f"{prefix}*.tar in {folder}, found {names or 'none'}"
        )
    return names[:count]


def _header_blocks(shard: str, offsets: np.ndarray) -> list[bytes]:
    """The 512-byte header at each offset; neighbours share one range read."""
    blocks: list[bytes] = [b""] * len(offsets)
    order = np.argsort(offsets, kind="stable")
    with VSIFile(shard) as f:
        start = 0
        while start < len(order):
            first = int(offsets[order[start]])
            stop = start + 1
            while stop < len(order) and int(offsets[order[stop]]) + TAR_BLOCK - first <= _MAX_READ:
                stop += 1
            last = int(offsets[order[stop - 1]])
            data = f.read_at(first, last + TAR_BLOCK - first)
            for i in order[start:stop]:
                at = int(offsets[i]) - first
                blocks[int(i)] = data[at : at + TAR_BLOCK]
            start = stop
    return blocks


def _check(member: TarMember, row: Any, index: TaridxIndex, where: str) -> str:
    """The row's stem, after checking the header agrees with the row."""
    stem, ext = split_name(member.name)
    crashid = int(row["crashid"])
    expected_ext = index.extensions[int(row["extid"])]
    problems = []
    if member.size != int(row["size"]):
        problems.append(f"size {member.size} (index: {int(row['size'])})")
    if key_hash(stem) != int(row["keyhash"]):
        problems.append(f"stem {stem!r} whose xxh64 is not the row's keyhash {int(row['keyhash'])}")
    elif crashid and index.crash_stems[crashid - 1] != stem:
        problems.append(f"stem {stem!r} (crash table: {index.crash_stems[crashid - 1]!r})")
    if ext != expected_ext:
        problems.append(f"extension {ext!r} (index: {expected_ext!r})")
    if problems:
        raise TaridxFormatError(
            f"{where}: the tar header names {member.name!r} with {', '.join(problems)}; "
            "the index does not describe this tar"
        )
    return stem


def _check_utf8(name: str, where: str) -> None:
    """Refuse a member name that is not UTF-8: it cannot become a sample id."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError as exc:
        raw = name.encode("utf-8", "surrogateescape")
        raise TaridxFormatError(
            f"{where}: expected a UTF-8 member name (it becomes the sample id), found the "
            f"bytes {raw!r}"
        ) from exc


def _names_and_stems(
    path: str, index: TaridxIndex, shards: list[str]
) -> tuple[list[str], list[str]]:
    """Each row's member name and stem, from the tar header it points at (checked)."""
    rows: Rows = index.rows
    names, stems = [""] * len(rows), [""] * len(rows)
    folder = parent_vsi(path)
    for fid, shard in enumerate(shards):
        positions = np.flatnonzero(rows["fid"] == fid)
        shard_path = join_vsi(folder, shard)
        blocks = _header_blocks(shard_path, rows["offset"][positions])
        for position, block in zip(positions.tolist(), blocks, strict=True):
            row = rows[position]
            where = f"{path}: row {position} -> {shard_path} byte {int(row['offset'])}"
            member = parse_member_header(block, where)
            _check_utf8(member.name, where)
            names[position], stems[position] = member.name, _check(member, row, index, where)
    return names, stems


def member_table(path: str, index: TaridxIndex) -> pa.Table:
    """The level-0 table of an index, member names read from the tar headers.

    Raises:
        TaridxFormatError: no rows, missing shards, or rows that disagree with
            the tar headers they point at.
    """
    rows: Rows = index.rows
    if len(rows) == 0:
        raise TaridxFormatError(
            f"{path}: the index has no rows; expected at least one member to become a sample"
        )
    shards = shard_names(path, int(rows["fid"].max()) + 1)
    names, stems = _names_and_stems(path, index, shards)
    return pa.table(
        {
            ID: pa.array(names, pa.string()),
            TYPE: pa.array([FILE] * len(names), pa.string()),
            KEY_COLUMN: pa.array(stems, pa.string()),
            EXT_COLUMN: pa.array([index.extensions[i] for i in rows["extid"]], pa.string()),
            OFFSET: pa.array(rows["offset"].astype(np.int64) + TAR_BLOCK, pa.int64()),
            SIZE: pa.array(rows["size"].astype(np.int64), pa.int64()),
            SOURCE_FILE: pa.array([shards[i] for i in rows["fid"]], pa.string()),
        }
    )


class TarIdxContainer(OpenedContainer):
    """A ``.taridx`` index over tar shards, recognised by its suffix or its magic.

    Example:
        >>> ds = taco_gdal.load("train.taridx")  # shards train_0000.tar, train_0001.tar
        >>> ds.read(0)
        '/vsisubfile/512_622,.../train_0000.tar'
    """

    format: ClassVar[str] = "taridx"
    priority: ClassVar[int] = 50

    @classmethod
    def claims(cls, probe: Probe) -> bool:
        return probe.name.lower().endswith(SUFFIX)

    @classmethod
    def detect(cls, probe: Probe) -> bool:
        exists, is_dir = probe.stat()
        return exists and not is_dir and probe.head().startswith(MAGIC)

    @classmethod
    def open(cls, probe: Probe, base_path: str | None = None) -> TarIdxContainer:
        path = probe.path
        table = member_table(path, read_taridx(path))
        collection = derived_collection(table, path, LABEL, DESCRIPTIONS)
        rule = VsiRule("source_file", parent_vsi(path))
        return cls(path, [table], collection, rule, [f"{path}: TARIDX rows"])
