"""TACO FOLDER: ``COLLECTION.json``, ``METADATA/levelK.parquet`` and ``DATA/`` on disk.

All reads go through GDAL's VSI layer, so a folder on a web server or in a
bucket opens the same way as a local one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import pyarrow as pa

from taco_gdal.format import vsi
from taco_gdal.format.names import COLLECTION_FILE, DATA_DIR, MAX_DEPTH, METADATA_DIR, level_file
from taco_gdal.io.vsi import read_all
from taco_gdal.read.containers._parse import collection_depth, parse_collection, parse_level
from taco_gdal.read.containers.base import Probe, VsiRule, path_exists

__all__ = ["FolderContainer", "read_level_files"]


def read_level_files(folder: str, depth: int | None) -> tuple[list[pa.Table], list[str]]:
    """``{folder}/level0.parquet`` ... up to ``depth`` (unknown: until a file is missing)."""
    levels: list[pa.Table] = []
    sources: list[str] = []
    last = MAX_DEPTH if depth is None else depth
    for level in range(last + 1):
        path = vsi.join(folder, level_file(level))
        if depth is None and level > 0 and not path_exists(path):
            break
        levels.append(parse_level(read_all(path), path))
        sources.append(path)
    return levels, sources


@dataclass(frozen=True)
class FolderContainer:
    """A TACO dataset stored as a folder.

    Example:
        >>> from taco_gdal.read.containers.base import Probe
        >>> FolderContainer.open(Probe("/data/ds", "/data/ds")).vsi_rule  # doctest: +SKIP
        VsiRule(kind='folder', root='/data/ds/DATA')
    """

    format: ClassVar[str] = "folder"
    priority: ClassVar[int] = 30

    path: str
    levels: Sequence[pa.Table]
    collection: dict[str, Any]
    vsi_rule: VsiRule
    sources: Sequence[str]

    @classmethod
    def claims(cls, probe: Probe) -> bool:
        return False

    @classmethod
    def detect(cls, probe: Probe) -> bool:
        exists, is_dir = probe.stat()
        if exists and not is_dir:
            return False
        return probe.exists(COLLECTION_FILE)

    @classmethod
    def open(cls, probe: Probe, base_path: str | None = None) -> FolderContainer:
        where = vsi.join(probe.path, COLLECTION_FILE)
        collection = parse_collection(read_all(where), where)
        depth = collection_depth(collection, where)
        levels, sources = read_level_files(vsi.join(probe.path, METADATA_DIR), depth)
        root = vsi.join(probe.path, DATA_DIR)
        return cls(probe.path, levels, collection, VsiRule("folder", root), sources)
