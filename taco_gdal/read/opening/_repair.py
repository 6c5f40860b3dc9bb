"""Repair level1+ offsets that tacotoolbox attached to the wrong rows.

tacotoolbox (0.26.1 to 0.26.9 at least) pastes the per-folder ``__meta__`` offsets
next to a level's rows in lexicographic folder order while the rows are in sample
order, so when sibling folders do not sort in creation order (``t2, t10``) rows
point at another folder's members (reference notes, section 1.6).  When the
parent folders already appear in sorted order the paste was right and nothing is
read; otherwise the parents' ``__meta__`` files are read and their offsets win,
with one :class:`~taco_gdal.errors.TacoWarning` per dataset.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from taco_gdal.errors import TacoFormatError, TacoWarning
from taco_gdal.format import vsi
from taco_gdal.format.names import FOLDER, ID, OFFSET, RELATIVE_PATH, SIZE, SOURCE_FILE, TYPE
from taco_gdal.io.arrowbuf import owned_reader
from taco_gdal.io.vsi import VSIFile
from taco_gdal.read.opening.containers.base import VsiRule

__all__ = ["parent_paths", "repair_level_offsets"]

log = logging.getLogger(__name__)

_MAX_COALESCE = 64 * 1024 * 1024
"""Largest span of adjacent ``__meta__`` members fetched with one read."""


@dataclass(frozen=True, slots=True)
class _Folder:
    """A FOLDER row of the parent level: where its ``__meta__`` is."""

    archive: str
    path: str
    offset: int
    size: int


def _archives(table: pa.Table, rule: VsiRule) -> np.ndarray:
    """The archive (GDAL path) each row's offsets refer to."""
    if rule.kind == "source_file" and SOURCE_FILE in table.column_names:
        # a few parts for many rows: each distinct name is joined once (a null as str() says)
        names = pc.fill_null(table.column(SOURCE_FILE).cast(pa.string()), "None")
        encoded = pc.dictionary_encode(names.combine_chunks())
        joined = [vsi.join(rule.root, str(n)) for n in encoded.dictionary.to_pylist()]
        positions: np.ndarray = encoded.indices.to_numpy()
        archives: np.ndarray = np.asarray(joined, dtype=object)[positions]
        return archives
    return np.full(table.num_rows, rule.root, dtype=object)


def parent_paths(table: pa.Table) -> np.ndarray:
    """``tile0/s1/`` for a row at ``tile0/s1/b0`` or ``tile0/s1/x/``."""
    trimmed = pc.utf8_rtrim(table.column(RELATIVE_PATH).cast(pa.string()), characters="/")
    parents = pc.replace_substring_regex(trimmed, pattern="[^/]*$", replacement="")
    return np.asarray(parents.to_numpy(zero_copy_only=False), dtype=object)


def _folder_paths(table: pa.Table, level: int) -> np.ndarray:
    """Each row's own folder path ``x/`` (level 0: its id) as children name their parent."""
    column = ID if level == 0 or RELATIVE_PATH not in table.column_names else RELATIVE_PATH
    trimmed = pc.utf8_rtrim(table.column(column).cast(pa.string()), characters="/")
    return np.asarray(
        pc.binary_join_element_wise(trimmed, "/", "").to_numpy(zero_copy_only=False),
        dtype=object,
    )


def _may_be_misplaced(archives: np.ndarray, parents: np.ndarray) -> bool:
    """False when, in every archive, the rows' parent folders appear in sorted order."""
    if archives.size == 0:
        return False
    starts = np.ones(archives.size, dtype=bool)
    starts[1:] = (archives[1:] != archives[:-1]) | (parents[1:] != parents[:-1])
    group_archives, group_parents = archives[starts], parents[starts]
    same = np.asarray(group_archives[1:] == group_archives[:-1], dtype=bool)
    runs = int(np.count_nonzero(~same)) + 1
    if runs != len(set(group_archives.tolist())):
        return True  # an archive's rows are not contiguous: verify rather than guess
    increasing = np.asarray(group_parents[1:][same] > group_parents[:-1][same], dtype=bool)
    return not bool(increasing.all())


def _first_unsorted(archives: np.ndarray, parents: np.ndarray) -> list[tuple[int, int]]:
    """Per archive whose parent folders are out of sorted order, the rows of one folder.

    That folder (the first whose place differs from its place in sorted order) would hold
    another folder's offsets if the level had been written with the lexicographic paste,
    so its ``__meta__`` alone tells a correct level from a misplaced one.
    """
    starts = np.flatnonzero(
        np.concatenate(([True], (archives[1:] != archives[:-1]) | (parents[1:] != parents[:-1])))
    )
    ends = np.append(starts[1:], archives.size)
    by_archive: dict[str, list[int]] = {}
    for group, row in enumerate(starts.tolist()):
        by_archive.setdefault(str(archives[row]), []).append(group)
    out = []
    for groups in by_archive.values():
        names = [parents[starts[g]] for g in groups]
        for g, name, want in zip(groups, names, sorted(names), strict=True):
            if name != want:
                out.append((int(starts[g]), int(ends[g])))
                break
    return out


def _probe_agrees(
    table: pa.Table,
    parent: pa.Table,
    level: int,
    archives: np.ndarray,
    parents: np.ndarray,
    parent_archives: np.ndarray,
) -> bool:
    """True when one out-of-order folder per archive has exactly its ``__meta__`` entries."""
    probes = _first_unsorted(archives, parents)
    if not probes:
        return False
    paths = _folder_paths(parent, level - 1)
    folders = []
    for start, _ in probes:
        match = np.flatnonzero((paths == parents[start]) & (parent_archives == archives[start]))
        if match.size != 1 or parent.column(TYPE)[int(match[0])].as_py() != FOLDER:
            return False
        row = int(match[0])
        folders.append(
            _Folder(
                str(archives[start]),
                str(parents[start]),
                int(parent.column(OFFSET)[row].as_py()),
                int(parent.column(SIZE)[row].as_py()),
            )
        )
    metas = _read_metas(folders)
    for start, stop in probes:
        meta = metas.get((str(archives[start]), str(parents[start])))
        rows = table.select([ID, OFFSET, SIZE]).slice(start, stop - start)
        if meta is None or meta.num_rows != rows.num_rows:
            return False
        for name in (ID, OFFSET, SIZE):
            if meta.column(name).to_pylist() != rows.column(name).to_pylist():
                return False
    return True


def _read_metas(folders: Sequence[_Folder]) -> dict[tuple[str, str], pa.Table]:
    """Every folder's ``__meta__`` (id, offset, size), adjacent members read together."""
    out: dict[tuple[str, str], pa.Table] = {}
    by_archive: dict[str, list[_Folder]] = {}
    for folder in folders:
        by_archive.setdefault(folder.archive, []).append(folder)
    for archive, items in by_archive.items():
        items.sort(key=lambda f: f.offset)
        with VSIFile(archive) as handle:
            start = 0
            while start < len(items):
                stop = start + 1
                while (
                    stop < len(items)
                    and items[stop].offset + items[stop].size - items[start].offset <= _MAX_COALESCE
                ):
                    stop += 1
                first = items[start].offset
                span = max(f.offset + f.size for f in items[start:stop]) - first
                data = pa.py_buffer(handle.read_at(first, span))
                for folder in items[start:stop]:
                    chunk = data.slice(folder.offset - first, folder.size)
                    out[(archive, folder.path)] = _parse_meta(chunk, folder)
                start = stop
    return out


def _parse_meta(chunk: pa.Buffer, folder: _Folder) -> pa.Table:
    where = f"{folder.archive}: __meta__ of {folder.path!r} at byte {folder.offset}"
    try:
        table = pq.read_table(owned_reader(chunk), columns=[ID, OFFSET, SIZE])
    except (pa.ArrowInvalid, OSError, KeyError) as exc:
        raise TacoFormatError(
            f"{where}: expected a parquet file with columns {ID}, {OFFSET}, {SIZE}: {exc}"
        ) from exc
    return table


def _parent_folders(parent: pa.Table, level: int, archives: np.ndarray) -> list[_Folder]:
    types = parent.column(TYPE).to_numpy(zero_copy_only=False)
    paths = _folder_paths(parent, level)
    offsets = parent.column(OFFSET).to_numpy()
    sizes = parent.column(SIZE).to_numpy()
    return [
        _Folder(str(archives[i]), str(paths[i]), int(offsets[i]), int(sizes[i]))
        for i in range(parent.num_rows)
        if types[i] == FOLDER
    ]


def _repair_level(
    table: pa.Table, parent: pa.Table, level: int, rule: VsiRule
) -> tuple[pa.Table, int]:
    """``table`` with offsets taken from its parents' ``__meta__``; and how many rows changed."""
    archives = _archives(table, rule)
    parents = parent_paths(table)
    if not _may_be_misplaced(archives, parents):
        return table, 0
    parent_archives = _archives(parent, rule)
    if _probe_agrees(table, parent, level, archives, parents, parent_archives):
        return table, 0
    metas = {
        key: (
            meta.column(ID).to_pylist(),
            meta.column(OFFSET).to_pylist(),
            meta.column(SIZE).to_pylist(),
        )
        for key, meta in _read_metas(_parent_folders(parent, level - 1, parent_archives)).items()
    }
    ids = table.column(ID).to_pylist()
    offsets = table.column(OFFSET).to_numpy().astype(np.int64)
    sizes = table.column(SIZE).to_numpy().astype(np.int64)
    new_offsets, new_sizes = offsets.copy(), sizes.copy()
    seen: dict[tuple[str, str], int] = {}
    for row, (archive, folder) in enumerate(zip(archives.tolist(), parents.tolist(), strict=True)):
        key = (str(archive), str(folder))
        position = seen.get(key, 0)
        seen[key] = position + 1
        meta = metas.get(key)
        if meta is None or position >= len(meta[0]):
            raise TacoFormatError(
                f"{key[0]}: level {level} row {row} ({ids[row]!r}) has no entry in the "
                f"__meta__ of its parent folder {key[1]!r}"
            )
        if meta[0][position] != ids[row]:
            raise TacoFormatError(
                f"{key[0]}: level {level} row {row} is {ids[row]!r} but entry {position} of "
                f"the __meta__ of {key[1]!r} is {meta[0][position]!r}"
            )
        new_offsets[row] = meta[1][position]
        new_sizes[row] = meta[2][position]
    changed = int(np.count_nonzero((new_offsets != offsets) | (new_sizes != sizes)))
    if changed:
        table = table.set_column(
            table.column_names.index(OFFSET), OFFSET, pa.array(new_offsets, pa.int64())
        )
        table = table.set_column(
            table.column_names.index(SIZE), SIZE, pa.array(new_sizes, pa.int64())
        )
    return table, changed


def repair_level_offsets(levels: Sequence[pa.Table], rule: VsiRule, where: str) -> list[pa.Table]:
    """Level tables whose level1+ offsets agree with the archives' ``__meta__`` files.

    Example:
        >>> from taco_gdal.read.opening.containers.base import Probe
        >>> from taco_gdal.read.opening.containers.zip import ZipContainer
        >>> zc = ZipContainer.open(Probe("tiles.tacozip", "tiles.tacozip"))
        >>> zc.vsi_rule == VsiRule("subfile", "tiles.tacozip")
        True
        >>> tables = repair_level_offsets(zc.levels, zc.vsi_rule, "tiles.tacozip")
        >>> [t.num_rows for t in tables], tables[1] is zc.levels[1]  # written by taco_gdal: as is
        ([3, 9], True)
    """
    if rule.kind not in ("subfile", "source_file") or len(levels) < 2:
        return list(levels)
    out = [levels[0]]
    fixed: list[str] = []
    for level in range(1, len(levels)):
        table = levels[level]
        needed = {ID, TYPE, OFFSET, SIZE, RELATIVE_PATH}
        if not (
            needed <= set(table.column_names)
            and needed - {RELATIVE_PATH} <= set(out[-1].column_names)
        ):
            out.append(table)
            continue
        repaired, changed = _repair_level(table, out[-1], level, rule)
        if changed:
            fixed.append(f"{changed} of {table.num_rows} rows of level {level}")
        out.append(repaired)
    if fixed:
        message = (
            f"{where}: consolidated offsets point at other members ({', '.join(fixed)}), "
            "the tacotoolbox level1+ offset bug; using the offsets of the __meta__ files"
        )
        log.warning(message)
        warnings.warn(message, TacoWarning, stacklevel=4)
    return out
