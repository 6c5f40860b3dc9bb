"""TACOCAT: the metadata of many TACO ZIPs consolidated in one place.

Three forms: the binary ``__TACOCAT__`` file of the specification, a ``.tacocat/``
folder (tacotoolbox >= 0.19), or a folder that contains
``.tacocat/COLLECTION.json``.  Rows name their ZIP in ``internal:source_file``;
the ZIPs are looked for beside the TACOCAT unless ``base_path`` says otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import pyarrow as pa
import pyarrow.compute as pc

from taco_gdal.errors import TacoFormatError, TacoIOError
from taco_gdal.format import vsi
from taco_gdal.format.names import (
    COLLECTION_FILE,
    SOURCE_FILE,
    TACOCAT_DIR,
    TACOCAT_FILE,
    level_file,
)
from taco_gdal.format.tacocat import MAGIC, TACOCAT_HEADER_SIZE, TacoCatHeader
from taco_gdal.io.vsi import VSIFile, file_size
from taco_gdal.read.opening.containers._limits import check_ranges
from taco_gdal.read.opening.containers._parse import (
    parse_metadata_deferring,
    read_entries,
    stream_bytes,
)
from taco_gdal.read.opening.containers._paths import escape_reason, symlink_on_path
from taco_gdal.read.opening.containers.base import OpenedContainer, Probe, VsiRule, path_exists
from taco_gdal.read.opening.containers.folder import Metadata, read_folder_deferring

__all__ = ["TacoCatContainer"]

_NESTED = f"{TACOCAT_DIR}/{COLLECTION_FILE}"


def _read_binary(probe: Probe) -> Metadata:
    path = probe.path
    with VSIFile(path) as f:
        head = probe.head()
        if len(head) < TACOCAT_HEADER_SIZE:
            head = f.read_at(0, TACOCAT_HEADER_SIZE)
        header = TacoCatHeader.unpack(head, path)
        for i, entry in enumerate(header.levels):
            if entry.length == 0:
                raise TacoFormatError(
                    f"{path}: __TACOCAT__ declares max depth {header.max_depth} but the entry "
                    f"of {level_file(i)} (slot {i}) is empty"
                )
        labels = [f"{level_file(i)} (__TACOCAT__ slot {i})" for i in range(len(header.levels))]
        labels.append(f"{COLLECTION_FILE} (__TACOCAT__ slot 6)")
        entries = [*header.levels, header.collection]
        buffers = read_entries(f, entries, labels, stream_from=stream_bytes())
        return parse_metadata_deferring(buffers, labels, path)


def _check_sources(
    levels: Sequence[pa.Table], sources: Sequence[str], base: str, where: str
) -> None:
    for table, source in zip(levels, sources, strict=True):
        if SOURCE_FILE not in table.column_names:
            raise TacoFormatError(
                f"{source}: a TACOCAT level table needs column {SOURCE_FILE!r}; the table has "
                f"columns {table.column_names}"
            )
    names: set[str] = set()
    for table, source in zip(levels, sources, strict=True):
        for name in pc.unique(table.column(SOURCE_FILE)).to_pylist():
            if name is None:
                raise TacoFormatError(f"{source}: {SOURCE_FILE} is null in some rows")
            reason = escape_reason(str(name))
            if reason is not None:
                raise TacoFormatError(
                    f"{source}: {SOURCE_FILE} {str(name)[:200]!r} must name a ZIP beside the "
                    f"TACOCAT ({reason})"
                )
            names.add(str(name))
    if vsi.is_remote(base):
        return  # checked when a sample is read: one request per ZIP would be too many here
    for name in sorted(names):
        link = symlink_on_path(base, name)
        if link is not None:
            raise TacoFormatError(
                f"{where}: source ZIP {name!r} is reached through the symlink {link!r}; refused"
            )
        if not path_exists(vsi.join(base, name)):
            raise TacoIOError(
                f"{where}: source ZIP {name!r} named in {SOURCE_FILE} not found at "
                f"{vsi.join(base, name)} (pass base_path= if the ZIPs are elsewhere)"
            )
        size = file_size(vsi.join(base, name))
        for table, source in zip(levels, sources, strict=True):
            rows = table.filter(pc.equal(table.column(SOURCE_FILE), name))
            check_ranges(rows, size, source, vsi.join(base, name))


class TacoCatContainer(OpenedContainer):
    """A consolidated TACOCAT index over many TACO ZIPs.

    Example:
        >>> from taco_gdal.read.opening.containers.base import Probe
        >>> cat = TacoCatContainer.open(Probe("cat/.tacocat", "cat/.tacocat"))
        >>> cat.vsi_rule
        VsiRule(kind='source_file', root='cat')
    """

    format: ClassVar[str] = "tacocat"
    priority: ClassVar[int] = 10

    @classmethod
    def claims(cls, probe: Probe) -> bool:
        return probe.name in (TACOCAT_FILE, TACOCAT_DIR) or probe.name.endswith(TACOCAT_DIR)

    @classmethod
    def detect(cls, probe: Probe) -> bool:
        exists, is_dir = probe.stat()
        if exists and not is_dir:
            return probe.head().startswith(MAGIC)
        return probe.exists(_NESTED)

    @classmethod
    def open(cls, probe: Probe, base_path: str | None = None) -> TacoCatContainer:
        path = probe.path
        exists, is_dir = probe.stat()
        if probe.name == TACOCAT_FILE or (exists and not is_dir):
            levels, collection, sources, deferred = _read_binary(probe)
            default_base = vsi.parent(path)
        elif probe.name.endswith(TACOCAT_DIR):
            levels, collection, sources, deferred = read_folder_deferring(path)
            default_base = vsi.parent(path)
        else:
            folder = vsi.join(path, TACOCAT_DIR)
            levels, collection, sources, deferred = read_folder_deferring(folder)
            default_base = path
        base = default_base if base_path is None else vsi.to_vsi(base_path).rstrip("/")
        _check_sources(levels, sources, base, path)
        rule = VsiRule("source_file", base)
        return cls(path, levels, collection, rule, sources, deferred)
