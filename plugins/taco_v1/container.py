"""TACO v1 files (``.taco``, ``.tortilla``) as a taco_gdal container.

Requests: the first 256 bytes come from the shared probe (header and magic);
one range read returns the footer and, for a ``.taco``, the COLLECTION that
follows it; every embedded tortilla (a ``TORTILLA`` sample) costs one read for
its header and one for its footer.

Levels: the footer of the file is level 0, the footers of its embedded
tortillas are level 1 (and so on), one row per sample, with the v1 columns kept
as they are and, added: ``id`` (``tortilla:id``), ``type`` (``FOLDER`` for a
``TORTILLA`` sample, else ``FILE``), ``internal:offset`` / ``internal:size``
(absolute byte range in the file), ``internal:parent_id`` and the GDAL path
(rule ``stored``): the ``/vsisubfile/`` range of every FILE row, exactly what
tacoreader 0.6 puts in ``internal:subfile``; null for a FOLDER row, whose
children come from the next level (v1 has no ``__meta__``).  As tacoreader's
``read()`` does, an embedded sample's ``tortilla:offset`` is made absolute.
Two columns get their TACO 2 types so filters work as on v2: ``stac:centroid``
(WKT text in v1) becomes a WKB point, ``stac:time_start`` / ``stac:time_end``
(epoch seconds in v1) become UTC timestamps.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from taco_gdal.containers import (
    FILE,
    FOLDER,
    GDAL_VSI,
    ID,
    OFFSET,
    PARENT_ID,
    SIZE,
    STAC_CENTROID,
    STAC_TIME_START,
    TYPE,
    OpenedContainer,
    Probe,
    TacoFormatError,
    VSIFile,
    VsiRule,
    build_subfile,
    core_fields,
    described_collection,
    loads_json,
    owned_reader,
)
from taco_v1.layout import (
    DATA_START,
    HEADER_SIZE,
    TACO_HEADER_SIZE,
    V1FormatError,
    V1Header,
    looks_like_v1,
    parse_header,
)

__all__ = ["SUFFIXES", "V1_ID", "TacoV1Container", "read_footer"]

SUFFIXES: Final = (".taco", ".tortilla")
V1_ID: Final = "tortilla:id"
V1_FORMAT: Final = "tortilla:file_format"
V1_OFFSET: Final = "tortilla:offset"
V1_LENGTH: Final = "tortilla:length"
NESTED: Final = "TORTILLA"
CENTROID: Final = STAC_CENTROID
TIMES: Final = (STAC_TIME_START, "stac:time_end")  # v1 also wrote an end time
MAX_DEPTH: Final = 5
SOURCE_KEY: Final = "taco_gdal:source"
_CORE: Final = ("id", "dataset_version", "description", "licenses", "providers", "tasks")


def read_footer(f: VSIFile, start: int, header: V1Header, where: str) -> pa.Table:
    """The footer table of the tortilla that starts at byte ``start`` of ``f``."""
    data = f.read_exact(start + header.footer_offset, header.footer_length, "v1 footer")
    return _parse_footer(data, f"{where}: footer at byte {start + header.footer_offset}")


def _parse_footer(data: bytes, where: str) -> pa.Table:
    try:
        table = pq.ParquetFile(owned_reader(data)).read()
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise V1FormatError(f"{where}: expected a parquet footer, cannot parse it: {exc}") from exc
    table = table.drop_columns([c for c in table.column_names if c.startswith("__index_level")])
    missing = [c for c in (V1_ID, V1_FORMAT, V1_OFFSET, V1_LENGTH) if c not in table.column_names]
    if missing:
        raise V1FormatError(f"{where}: expected v1 columns {missing}, found {table.column_names}")
    return table


def _as_v2_types(table: pa.Table) -> pa.Table:
    """``stac:centroid`` WKT -> WKB point, ``stac:time_*`` epoch seconds -> UTC timestamps.

    The TACO 2 types of those columns, so filters work as on v2.
    """
    for name in table.column_names:
        column = table.column(name)
        if name == CENTROID and (
            pa.types.is_string(column.type) or pa.types.is_large_string(column.type)
        ):
            import shapely  # only for v1 files with WKT centroids: not on every load()

            values = column.to_pylist()
            wkb = [None if v is None else shapely.to_wkb(shapely.from_wkt(v)) for v in values]
            table = table.set_column(
                table.column_names.index(name), name, pa.array(wkb, pa.binary())
            )
        elif name in TIMES and (
            pa.types.is_floating(column.type) or pa.types.is_integer(column.type)
        ):
            micros = pc.cast(pc.multiply(column.cast(pa.float64()), 1e6), pa.int64())
            stamps = micros.cast(pa.timestamp("us", tz="UTC"))
            table = table.set_column(table.column_names.index(name), name, stamps)
    return table


def _level(table: pa.Table, base: int, parents: np.ndarray | None, archive: str) -> pa.Table:
    """A footer as a level table: absolute offsets, id, type, parent, GDAL path."""
    table = _as_v2_types(table)
    offsets = pc.add(table.column(V1_OFFSET).cast(pa.int64()), base)
    sizes = table.column(V1_LENGTH).cast(pa.int64())
    kinds = [FOLDER if k == NESTED else FILE for k in table.column(V1_FORMAT).to_pylist()]
    paths = [
        None if kind == FOLDER else build_subfile(int(o), int(s), archive)
        for kind, o, s in zip(kinds, offsets.to_pylist(), sizes.to_pylist(), strict=True)
    ]
    table = table.set_column(table.column_names.index(V1_OFFSET), V1_OFFSET, offsets)
    columns: dict[str, Any] = {
        ID: table.column(V1_ID).cast(pa.string()),
        TYPE: pa.array(kinds, pa.string()),
    }
    columns.update({name: table.column(name) for name in table.column_names})
    columns[OFFSET] = offsets
    columns[SIZE] = sizes
    if parents is not None:
        columns[PARENT_ID] = pa.array(parents, pa.int64())
    columns[GDAL_VSI] = pa.array(paths, pa.string())
    return pa.table(columns)


def _children(f: VSIFile, level: pa.Table, size: int, where: str, archive: str) -> pa.Table | None:
    """The next level: the footers of every embedded tortilla of ``level``, concatenated."""
    parts, kinds = [], level.column(TYPE).to_pylist()
    starts = level.column(OFFSET).to_pylist()
    lengths = level.column(SIZE).to_pylist()
    for position, (kind, start, length) in enumerate(zip(kinds, starts, lengths, strict=True)):
        if kind != FOLDER:
            continue
        here = f"{where}: embedded tortilla at byte {start}"
        head = f.read_exact(int(start), HEADER_SIZE, "embedded tortilla header")
        header = parse_header(head, here, min(int(length), size - int(start)))
        footer = read_footer(f, int(start), header, where)
        parents = np.full(footer.num_rows, position, dtype=np.int64)
        parts.append(_level(footer, int(start), parents, archive))
    if not parts:
        return None
    return pa.concat_tables(parts, promote_options="permissive")


def _collection(
    levels: list[pa.Table], stored: dict[str, Any] | None, path: str, kind: str
) -> dict[str, Any]:
    if stored is None:
        core = core_fields(path, "TACO v1 tortilla")
        extras: dict[str, Any] = {SOURCE_KEY: {"generation": "v1", "format": kind}}
        return described_collection(levels, core, extras)
    core = {key: stored.get(key) for key in _CORE}
    if core["tasks"] is None and isinstance(stored.get("task"), str):
        core["tasks"] = [stored["task"]]
    skip = {*_CORE, "task", "taco_version"}
    extras = {key: value for key, value in stored.items() if key not in skip}
    extras[SOURCE_KEY] = {
        "generation": "v1",
        "format": kind,
        "taco_version": stored.get("taco_version"),
    }
    return described_collection(levels, core, extras)


class TacoV1Container(OpenedContainer):
    """A TACO v1 ``.taco`` or pytortilla ``.tortilla`` file.

    Example:
        >>> TacoV1Container.format
        'taco_v1'
    """

    format: ClassVar[str] = "taco_v1"
    priority: ClassVar[int] = 40

    @classmethod
    def claims(cls, probe: Probe) -> bool:
        return probe.name.lower().endswith(SUFFIXES) and cls.detect(probe)

    @classmethod
    def detect(cls, probe: Probe) -> bool:
        head = probe.head()
        if not looks_like_v1(head) or len(head) < DATA_START:
            return False
        reserved = TACO_HEADER_SIZE if head[:2] == b"WX" else 26
        return not any(head[reserved:DATA_START])

    @classmethod
    def open(cls, probe: Probe, base_path: str | None = None) -> TacoV1Container:
        where = probe.given
        with VSIFile(probe.path) as f:
            size = f.size()
            header = parse_header(probe.head(), where, size)
            end = header.footer_end
            if header.collection_offset is not None and header.collection_length is not None:
                end = max(end, header.collection_offset + header.collection_length)
            block = f.read_exact(header.footer_offset, end - header.footer_offset, "v1 metadata")
            footer = _parse_footer(
                block[: header.footer_length], f"{where}: footer at byte {header.footer_offset}"
            )
            stored = None
            if header.collection_offset is not None and header.collection_length is not None:
                at = header.collection_offset - header.footer_offset
                stored = _json(block[at : at + header.collection_length], where)
            levels = [_level(footer, 0, None, probe.path)]
            while len(levels) <= MAX_DEPTH:
                deeper = _children(f, levels[-1], size, where, probe.path)
                if deeper is None:
                    break
                levels.append(deeper)
        sources = [f"{where}: level {k} footers" for k in range(len(levels))]
        collection = _collection(levels, stored, probe.path, header.kind)
        return cls(probe.path, levels, collection, VsiRule("stored", probe.path), sources)


def _json(data: bytes, where: str) -> dict[str, Any]:
    try:
        value = loads_json(data.decode("utf-8"), where)
    except UnicodeDecodeError as exc:
        raise V1FormatError(f"{where}: expected the COLLECTION as UTF-8 JSON: {exc}") from exc
    except TacoFormatError as exc:
        raise V1FormatError(str(exc)) from exc
    if not isinstance(value, dict):
        raise V1FormatError(f"{where}: expected the COLLECTION to be a JSON object")
    return value
