"""CoZIP containers: TACO 3.0.0 archives (profile 2), flat archives (profile 1), TACO 3 TACOCAT.

A CoZIP is detected by content: its first entry is ``__cozip__`` (bytes 30..38
of the file), and the profile byte of the index (byte 57) says what it holds.
The ``.zip`` suffix says nothing (v2 TACO ZIPs use it too), so ``claims`` also
looks at the probe's first bytes, which the probe reads once for everyone.

* :class:`Taco3Container` (profile 2): ``COLLECTION.json`` and
  ``METADATA/*.parquet`` from one range read, levels as described in
  :mod:`taco_cozip.levels`; every row carries its GDAL path (rule ``stored``:
  ``/vsisubfile/`` ranges of the archive, null for folders, which have no bytes
  and no ``__meta__`` in TACO 3).
* :class:`CozipFlatContainer` (profile 1): the ``__metadata__`` parquet
  (``name``, ``offset``, ``size`` plus any producer columns) as FILE samples with
  ``id`` = the member name, like the CAF and TARIDX plugins.
* :class:`Taco3CatContainer`: a TACO 3 ``.tacocat/`` folder (``sample.parquet``,
  ``children*.parquet`` and ``COLLECTION.json``, ids already global), paths
  into the partition named by ``internal:source_file``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

import pyarrow as pa
import pyarrow.parquet as pq

from taco_cozip.archive import PriorityFiles, read_priority_files
from taco_cozip.layout import (
    INDEX_OFFSET,
    PROFILE_FLAT,
    PROFILE_TACO,
    CozipFormatError,
    looks_like_cozip,
)
from taco_cozip.levels import (
    SAMPLE_LEVEL,
    SPEC_ROOT,
    Structure,
    level_file,
    to_levels,
    with_gdal_paths,
)
from taco_gdal.containers import (
    FILE,
    ID,
    OFFSET,
    SIZE,
    TYPE,
    OpenedContainer,
    Probe,
    TacoFormatError,
    VsiRule,
    derived_collection,
    described_collection,
    join_vsi,
    loads_json,
    owned_reader,
    parent_vsi,
    read_all,
)

__all__ = ["CozipFlatContainer", "Taco3CatContainer", "Taco3Container", "profile_of"]

COLLECTION: Final = "COLLECTION.json"
METADATA_DIR: Final = "METADATA"
FLAT_METADATA: Final = "__metadata__"
TACO3_CAT_MARK: Final = "sample.parquet"
STRUCTURE_KEY: Final = "taco:structure"
METADATA_KEY: Final = "taco:metadata"
VERSION_KEY: Final = "taco:version"
_PROFILE_BYTE: Final = INDEX_OFFSET + 6
_CORE: Final = ("id", "dataset_version", "description", "licenses", "providers", "tasks")
UNKNOWN_VERSION: Final = "unknown"


def profile_of(head: bytes) -> int | None:
    """The profile byte of a CoZIP from its first bytes (``None`` if not a CoZIP).

    Example:
        >>> profile_of(b"not a zip") is None
        True
    """
    if not looks_like_cozip(head) or len(head) <= _PROFILE_BYTE:
        return None
    return head[_PROFILE_BYTE]


def parse_json(data: bytes, where: str) -> dict[str, Any]:
    """COLLECTION.json as a dict.

    Raises:
        CozipFormatError: not UTF-8 JSON, or not an object.
    """
    try:
        value = loads_json(data.decode("utf-8"), where)
    except UnicodeDecodeError as exc:
        raise CozipFormatError(f"{where}: expected UTF-8 JSON, cannot parse it: {exc}") from exc
    except TacoFormatError as exc:
        raise CozipFormatError(str(exc)) from exc
    if not isinstance(value, dict):
        raise CozipFormatError(f"{where}: expected a JSON object, found {type(value).__name__}")
    return value


def parse_parquet(data: bytes, where: str) -> pa.Table:
    """A parquet table from bytes.

    Raises:
        CozipFormatError: not a parquet file.
    """
    try:
        return pq.ParquetFile(owned_reader(data)).read()
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise CozipFormatError(f"{where}: expected a parquet file, cannot parse it: {exc}") from exc


def taco3_collection(levels: list[pa.Table], stored: dict[str, Any]) -> dict[str, Any]:
    """A TACO 2 COLLECTION that carries every key of the TACO 3 one."""
    core = {key: stored.get(key) for key in _CORE}
    if core["dataset_version"] is None:
        core["dataset_version"] = UNKNOWN_VERSION
    extras = {key: value for key, value in stored.items() if key not in _CORE}
    descriptions = {
        name: str(spec.get("description", ""))
        for fields in (stored.get(METADATA_KEY) or {}).values()
        if isinstance(fields, dict)
        for name, spec in fields.items()
        if isinstance(spec, dict)
    }
    return described_collection(levels, core, extras, descriptions)


def _contract_levels(collection: dict[str, Any], where: str) -> list[str]:
    declared = collection.get(METADATA_KEY)
    if not isinstance(declared, dict) or not {SAMPLE_LEVEL, SPEC_ROOT} & set(declared):
        raise CozipFormatError(
            f"{where}: expected {METADATA_KEY!r} with a {SAMPLE_LEVEL!r} (or {SPEC_ROOT!r}) "
            f"level in COLLECTION.json, found {declared!r}"
        )
    return list(declared)


class Taco3Container(OpenedContainer):
    """A TACO 3.0.0 archive (CoZIP profile 2), opened with one metadata range read.

    Example:
        >>> Taco3Container.format
        'taco3'
    """

    format: ClassVar[str] = "taco3"
    priority: ClassVar[int] = 15

    @classmethod
    def claims(cls, probe: Probe) -> bool:
        return probe.name.lower().endswith(".zip") and cls.detect(probe)

    @classmethod
    def detect(cls, probe: Probe) -> bool:
        return profile_of(probe.head()) == PROFILE_TACO

    @classmethod
    def open(cls, probe: Probe, base_path: str | None = None) -> Taco3Container:
        files = read_priority_files(probe)
        where = probe.given
        collection = parse_json(files.require(COLLECTION), f"{where}: {COLLECTION}")
        tables = {
            name: parse_parquet(
                files.require(f"{METADATA_DIR}/{level_file(name)}"),
                f"{where}: {METADATA_DIR}/{level_file(name)}",
            )
            for name in _contract_levels(collection, where)
        }
        structure = Structure.parse(collection.get(STRUCTURE_KEY), where)
        levels, sources = to_levels(tables, structure, where)
        return cls(
            probe.path,
            with_gdal_paths(levels, probe.path, by_source=False),
            taco3_collection(levels, collection),
            VsiRule("stored"),
            sources,
        )


class Taco3CatContainer(OpenedContainer):
    """A TACO 3 ``.tacocat/`` folder over CoZIP partitions (one read per file).

    Example:
        >>> Taco3CatContainer.format
        'taco3cat'
    """

    format: ClassVar[str] = "taco3cat"
    priority: ClassVar[int] = 5

    @classmethod
    def claims(cls, probe: Probe) -> bool:
        return probe.name.endswith(".tacocat") and probe.exists(TACO3_CAT_MARK)

    @classmethod
    def detect(cls, probe: Probe) -> bool:
        # ``.tacocat/COLLECTION.json`` first: the built-in TACOCAT asks the same
        # (the probe remembers the answer), so a v2 FOLDER costs no extra request.
        return (
            probe.is_dir()
            and probe.exists(".tacocat/" + COLLECTION)
            and probe.exists(".tacocat/" + TACO3_CAT_MARK)
        )

    @classmethod
    def open(cls, probe: Probe, base_path: str | None = None) -> Taco3CatContainer:
        folder = probe.path if probe.name.endswith(".tacocat") else join_vsi(probe.path, ".tacocat")
        where = probe.given
        collection = parse_json(read_all(join_vsi(folder, COLLECTION)), f"{where}: {COLLECTION}")
        tables = {
            name: parse_parquet(
                read_all(join_vsi(folder, level_file(name))), f"{where}: {level_file(name)}"
            )
            for name in _contract_levels(collection, where)
        }
        structure = Structure.parse(collection.get(STRUCTURE_KEY), where)
        levels, sources = to_levels(tables, structure, where)
        root = base_path or parent_vsi(folder)
        return cls(
            folder,
            with_gdal_paths(levels, root, by_source=True),
            taco3_collection(levels, collection),
            VsiRule("stored", root),
            sources,
        )


class CozipFlatContainer(OpenedContainer):
    """A CoZIP profile 1 ("flat") archive: every listed member as a FILE sample.

    Example:
        >>> CozipFlatContainer.format
        'cozip'
    """

    format: ClassVar[str] = "cozip"
    priority: ClassVar[int] = 16

    @classmethod
    def claims(cls, probe: Probe) -> bool:
        return probe.name.lower().endswith(".zip") and cls.detect(probe)

    @classmethod
    def detect(cls, probe: Probe) -> bool:
        return profile_of(probe.head()) == PROFILE_FLAT

    @classmethod
    def open(cls, probe: Probe, base_path: str | None = None) -> CozipFlatContainer:
        files: PriorityFiles = read_priority_files(probe)
        where = f"{probe.given}: {FLAT_METADATA}"
        table = parse_parquet(files.require(FLAT_METADATA), where)
        missing = [c for c in ("name", "offset", "size") if c not in table.column_names]
        if missing:
            raise CozipFormatError(
                f"{where}: expected columns name, offset, size (CoZIP §13.3), missing {missing}"
            )
        extra = [c for c in table.column_names if c not in ("name", "offset", "size")]
        level0 = pa.table(
            {
                ID: table.column("name").cast(pa.string()),
                TYPE: pa.array([FILE] * table.num_rows, pa.string()),
                OFFSET: table.column("offset").cast(pa.int64()),
                SIZE: table.column("size").cast(pa.int64()),
                **{name: table.column(name) for name in extra},
            }
        )
        collection = derived_collection(level0, probe.path, "CoZIP flat archive")
        return cls(probe.path, [level0], collection, VsiRule("subfile", probe.path), [where])
