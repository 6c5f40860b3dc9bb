"""TACO 3 metadata tables as the reader's ``level0..N``.

TACO 3 (as written by taco-eo 0.14) stores one table per contract level:
``sample`` (one row per sample), ``children`` (the sample's direct contents)
and ``children/<folder>`` (one table per folder of the structure, e.g.
``children/before`` and ``children/after``); the TACO 3.0.0 text calls them
``collection``, ``sample`` and ``sample/<folder>`` (:func:`naming` reads
both).  The reader wants one table per depth, so:

* depth 0 is ``sample``, depth 1 ``children``, depth ``d`` every
  ``children/<a>/...`` table with ``d - 1`` folder components, concatenated
  and ordered by parent (stable), missing columns null;
* ``internal:current_id`` becomes the row position and ``internal:parent_id``
  the parent's position in the previous depth (remapped per source table);
* ``id`` is added below depth 0 (the file or folder name, the last component of
  ``internal:relative_path``) and ``type`` everywhere (``FOLDER`` for a sample and for a folder of
  ``taco:structure``, else ``FILE``);
* ``internal:offset`` / ``internal:size`` are added (null) below depth 0 where
  absent, and every row gets its ``internal:gdal_vsi`` (:func:`with_gdal_paths`,
  rule ``stored``): null for FOLDER rows, since TACO 3 folders have no bytes of
  their own (no ``__meta__``), ``/vsisubfile/`` ranges for files;
* each variable leaf of ``taco:structure`` (``img*[1,4].tif``) becomes a list
  column on depth 0, named by its declaration, holding the members each
  sample has (``["img0.tif", "img1.tif"]``), in index order;
* ``stac:centroid`` (taco-eo: ``struct<lon: float, lat: float>``) becomes a WKB
  point, the type TACO 2 uses, so bounding-box filters treat it as on v2.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from taco_cozip.layout import CozipFormatError
from taco_gdal.containers import (
    CURRENT_ID,
    FILE,
    FOLDER,
    GDAL_VSI,
    ID,
    OFFSET,
    PARENT_ID,
    RELATIVE_PATH,
    SIZE,
    SOURCE_FILE,
    STAC_CENTROID,
    TYPE,
    build_subfile,
    join_vsi,
)

__all__ = [
    "SAMPLE_LEVEL",
    "SPEC_ROOT",
    "Structure",
    "level_file",
    "naming",
    "to_levels",
    "with_gdal_paths",
]

SAMPLE_LEVEL: Final = "sample"
CHILDREN_LEVEL: Final = "children"
SPEC_ROOT: Final = "collection"
_VARIABLE: Final = re.compile(
    r"^(?P<prefix>[^*/]+)\*\[(?P<low>\d+),(?P<high>\d+)\](?P<suffix>[^/]*)$"
)


def level_file(level: str) -> str:
    """The parquet member of a contract level (``children/before`` -> ``children__before.parquet``).

    Example:
        >>> level_file("children/before")
        'children__before.parquet'
    """
    return level.replace("/", "__") + ".parquet"


def _depth(level: str, root: str) -> int:
    if level == root:
        return 0
    return level.count("/") + 1


def naming(levels: Iterable[str]) -> tuple[str, str]:
    """The contract's root and child level names.

    taco-eo 0.14 writes ``sample`` (one row per sample) and ``children``
    (``children/<folder>``); the TACO 3.0.0 text names the same tables
    ``collection`` and ``sample`` (``sample/<folder>``).  Both are read.

    Example:
        >>> naming(["collection", "sample", "sample/before"])
        ('collection', 'sample')
    """
    names = set(levels)
    return (SPEC_ROOT, SAMPLE_LEVEL) if SPEC_ROOT in names else (SAMPLE_LEVEL, CHILDREN_LEVEL)


@dataclass(frozen=True)
class Structure:
    """``taco:structure``: the folders of a sample and its variable leaves.

    Example:
        >>> s = Structure.parse(["before/B02.tif", "img*[1,4].tif"], "x")
        >>> sorted(s.folders), s.variables[0][0]
        (['before'], 'img*[1,4].tif')
    """

    folders: frozenset[str]
    variables: tuple[tuple[str, str, re.Pattern[str]], ...]
    """(declaration, folder, pattern of a member's path inside the sample)."""

    @classmethod
    def parse(cls, declared: object, where: str) -> Structure:
        if declared is None:
            return cls(frozenset(), ())
        if not isinstance(declared, list) or not all(isinstance(d, str) for d in declared):
            raise CozipFormatError(
                f"{where}: expected taco:structure to be null or a list of paths, found "
                f"{declared!r}"
            )
        folders: set[str] = set()
        variables = []
        for item in declared:
            parts = item.split("/")
            folders.update("/".join(parts[:k]) for k in range(1, len(parts)))
            match = _VARIABLE.match(parts[-1])
            if match:
                folder = "/".join(parts[:-1])
                stem = re.escape(match["prefix"]) + r"(0|[1-9][0-9]*)" + re.escape(match["suffix"])
                full = (re.escape(folder + "/") if folder else "") + stem
                variables.append((item, folder, re.compile(f"^{full}$")))
        return cls(frozenset(folders), tuple(variables))


def to_levels(
    tables: Mapping[str, pa.Table], structure: Structure, where: str
) -> tuple[list[pa.Table], list[str]]:
    """The reader's level tables from the contract's tables, and where each came from."""
    root, child = naming(tables)
    if root not in tables:
        raise CozipFormatError(
            f"{where}: expected a {root!r} level in taco:metadata, found {sorted(tables)}"
        )
    by_depth: dict[int, list[str]] = {}
    for name in tables:
        if name != root and not (name == child or name.startswith(child + "/")):
            raise CozipFormatError(
                f"{where}: expected levels {root!r}, {child!r} or '{child}/<folder>', "
                f"found {name!r}"
            )
        by_depth.setdefault(_depth(name, root), []).append(name)
    levels: list[pa.Table] = []
    sources: list[str] = []
    positions: dict[str, np.ndarray] = {}
    for depth in range(max(by_depth) + 1):
        names = sorted(by_depth.get(depth, []))
        if not names:
            raise CozipFormatError(f"{where}: no metadata level at depth {depth}")
        parts = []
        for name in names:
            table = tables[name]
            parent = None if depth == 0 else _parent_level(name, root, child)
            parts.append((name, table, parent))
        merged, mapping = _merge(parts, positions, structure, depth, where)
        positions.update(mapping)
        levels.append(merged)
        sources.append(f"{where}: " + ", ".join(level_file(n) for n in names))
    levels[0] = _with_sequences(levels[0], levels[1:], structure)
    return levels, sources


def _parent_level(name: str, root: str, child: str) -> str:
    if name == child:
        return root
    head, _, _ = name.rpartition("/")
    return head


def _ids(table: pa.Table, column: str, where: str) -> np.ndarray:
    if column not in table.column_names:
        raise CozipFormatError(f"{where}: expected column {column!r}, found {table.column_names}")
    values = table.column(column)
    if values.null_count:
        raise CozipFormatError(f"{where}: column {column!r} has {values.null_count} null values")
    return np.asarray(values.to_numpy(), dtype=np.int64)


def _merge(
    parts: Sequence[tuple[str, pa.Table, str | None]],
    positions: Mapping[str, np.ndarray],
    structure: Structure,
    depth: int,
    where: str,
) -> tuple[pa.Table, dict[str, np.ndarray]]:
    """One depth: remapped ids, id/type added, tables concatenated in parent order."""
    prepared, order_keys, owners = [], [], []
    for name, table, parent in parts:
        here = f"{where}: {level_file(name)}"
        current = _ids(table, CURRENT_ID, here)
        if parent is None:
            parents = np.arange(table.num_rows, dtype=np.int64)
        else:
            lookup = positions.get(parent)
            if lookup is None:
                raise CozipFormatError(f"{here}: its parent level {parent!r} is missing")
            stored = _ids(table, PARENT_ID, here)
            if stored.size and (stored.min() < 0 or stored.max() >= lookup.size):
                raise CozipFormatError(
                    f"{here}: expected {PARENT_ID} in 0..{lookup.size - 1} (rows of {parent!r}), "
                    f"found values {int(stored.min())}..{int(stored.max())}"
                )
            parents = lookup[stored]
        prepared.append(_described(table, depth, structure, here))
        order_keys.append(parents)
        owners.append((name, current))
    merged = pa.concat_tables(prepared, promote_options="permissive")
    parents = np.concatenate(order_keys)
    order = np.argsort(parents, kind="stable")
    merged = merged.take(pa.array(order))
    merged = _set(merged, CURRENT_ID, np.arange(merged.num_rows, dtype=np.int64))
    if depth:
        merged = _set(merged, PARENT_ID, parents[order])
    # new position of every stored current_id, per source table
    new_position = np.empty(order.size, dtype=np.int64)
    new_position[order] = np.arange(order.size)
    mapping: dict[str, np.ndarray] = {}
    start = 0
    for name, current in owners:
        rows = new_position[start : start + current.size]
        lookup = np.full(int(current.max()) + 1 if current.size else 0, -1, dtype=np.int64)
        lookup[current] = rows
        mapping[name] = lookup
        start += current.size
    return _ordered(merged), mapping


def _set(table: pa.Table, name: str, values: np.ndarray) -> pa.Table:
    column = pa.array(values, pa.int64())
    if name in table.column_names:
        return table.set_column(table.column_names.index(name), name, column)
    return table.append_column(name, column)


def _described(table: pa.Table, depth: int, structure: Structure, where: str) -> pa.Table:
    """``id`` and ``type`` added, offsets made present, the centroid as WKB."""
    if depth == 0:
        if ID not in table.column_names:  # the spec's samples are positions only
            ids = pa.array([str(v) for v in _ids(table, CURRENT_ID, where)], pa.string())
            table = table.append_column(ID, ids)
        # every TACO 3 sample holds its files one level down, in ``children``
        table = table.append_column(TYPE, pa.array([FOLDER] * table.num_rows, pa.string()))
    else:
        paths = table.column(RELATIVE_PATH).to_pylist()
        inside = [p.split("/", 1)[1] if "/" in p else p for p in paths]
        names = [p.rsplit("/", 1)[-1] for p in paths]
        kinds = [FOLDER if p in structure.folders else FILE for p in inside]
        if ID in table.column_names:
            table = table.drop_columns([ID])
        table = table.append_column(ID, pa.array(names, pa.string()))
        table = table.append_column(TYPE, pa.array(kinds, pa.string()))
    for name in (OFFSET, SIZE) if depth else ():
        if name not in table.column_names:
            table = table.append_column(name, pa.nulls(table.num_rows, pa.int64()))
        else:
            table = table.set_column(
                table.column_names.index(name), name, table.column(name).cast(pa.int64())
            )
    if STAC_CENTROID in table.column_names and pa.types.is_struct(table.column(STAC_CENTROID).type):
        table = table.set_column(
            table.column_names.index(STAC_CENTROID),
            STAC_CENTROID,
            _wkb_points(table.column(STAC_CENTROID)),
        )
    return table


def _wkb_points(column: pa.ChunkedArray) -> pa.Array:
    lon = pc.struct_field(column, "lon").to_pylist()
    lat = pc.struct_field(column, "lat").to_pylist()
    values = [
        None if x is None or y is None else struct.pack("<BIdd", 1, 1, float(x), float(y))
        for x, y in zip(lon, lat, strict=True)
    ]
    return pa.array(values, pa.binary())


def _ordered(table: pa.Table) -> pa.Table:
    """``id`` and ``type`` first, then the stored columns."""
    first = [ID, TYPE]
    rest = [c for c in table.column_names if c not in first]
    return table.select(first + rest)


def _with_sequences(level0: pa.Table, deeper: Sequence[pa.Table], structure: Structure) -> pa.Table:
    """One list column per variable leaf: the members each sample holds, in index order."""
    if not structure.variables:
        return level0
    rows: dict[tuple[Any, str], int] = {}
    sources = (
        level0.column(SOURCE_FILE).to_pylist()
        if SOURCE_FILE in level0.column_names
        else [None] * level0.num_rows
    )
    for position, (source, path) in enumerate(
        zip(sources, level0.column(RELATIVE_PATH).to_pylist(), strict=True)
    ):
        rows[(source, str(path))] = position
    found: dict[str, list[list[tuple[int, str]]]] = {
        decl: [[] for _ in range(level0.num_rows)] for decl, _, _ in structure.variables
    }
    for table in deeper:
        table_sources = (
            table.column(SOURCE_FILE).to_pylist()
            if SOURCE_FILE in table.column_names
            else [None] * table.num_rows
        )
        kinds = table.column(TYPE).to_pylist()
        for source, path, kind in zip(
            table_sources, table.column(RELATIVE_PATH).to_pylist(), kinds, strict=True
        ):
            if kind != FILE or "/" not in path:
                continue
            sample, inside = path.split("/", 1)
            for decl, _folder, pattern in structure.variables:
                match = pattern.match(inside)
                if match:
                    found[decl][rows[(source, sample)]].append((int(match[1]), inside))
    for decl, members in found.items():
        values = [[name for _, name in sorted(items)] for items in members]
        level0 = level0.append_column(decl, pa.array(values, pa.list_(pa.string())))
    return level0


def with_gdal_paths(levels: Sequence[pa.Table], root: str, by_source: bool) -> list[pa.Table]:
    """Every level with ``internal:gdal_vsi``: ``/vsisubfile/`` ranges of ``root`` (or of
    ``root/<internal:source_file>`` for a TACOCAT), null where a row has no bytes.

    Example:
        >>> t = pa.table({"internal:offset": [5, None], "internal:size": [3, None]})
        >>> with_gdal_paths([t], "/d/x.zip", False)[0].column("internal:gdal_vsi").to_pylist()
        ['/vsisubfile/5_3,/d/x.zip', None]
    """
    out = []
    for table in levels:
        if OFFSET not in table.column_names:
            paths: list[str | None] = [None] * table.num_rows
        else:
            offsets = table.column(OFFSET).to_pylist()
            sizes = table.column(SIZE).to_pylist()
            archives = (
                [join_vsi(root, str(s)) for s in table.column(SOURCE_FILE).to_pylist()]
                if by_source
                else [root] * table.num_rows
            )
            paths = [
                None if o is None or z is None else build_subfile(int(o), int(z), a)
                for o, z, a in zip(offsets, sizes, archives, strict=True)
            ]
        out.append(table.append_column(GDAL_VSI, pa.array(paths, pa.string())))
    return out
