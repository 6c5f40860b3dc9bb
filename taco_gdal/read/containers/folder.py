"""TACO FOLDER: ``COLLECTION.json``, ``METADATA/levelK.parquet`` and ``DATA/`` on disk.

All reads go through GDAL's VSI layer, so a folder on a web server or in a
bucket opens the same way as a local one.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pyarrow as pa

from taco_gdal.format import vsi
from taco_gdal.format.names import COLLECTION_FILE, DATA_DIR, MAX_DEPTH, METADATA_DIR, level_file
from taco_gdal.io.vsi import read_all
from taco_gdal.read.containers._parse import (
    collection_depth,
    parse_collection,
    parse_level_file,
)
from taco_gdal.read.containers._paths import check_folder_paths
from taco_gdal.read.containers.base import OpenedContainer, Probe, VsiRule, path_exists

__all__ = ["FolderContainer", "read_folder", "read_level_files"]


def read_level_files(folder: str, depth: int | None) -> tuple[list[pa.Table], list[str]]:
    """``{folder}/level0.parquet`` ... up to ``depth`` (unknown: until a file is missing)."""
    levels: list[pa.Table] = []
    sources: list[str] = []
    last = MAX_DEPTH if depth is None else depth
    for level in range(last + 1):
        path = vsi.join(folder, level_file(level))
        if depth is None and level > 0 and not path_exists(path):
            break
        levels.append(parse_level_file(path, path))
        sources.append(path)
    return levels, sources


def read_folder(
    folder: str, levels_folder: str | None = None
) -> tuple[list[pa.Table], dict[str, Any], list[str]]:
    """``{folder}/COLLECTION.json`` and the level files of ``levels_folder`` (default ``folder``).

    The collection's ``taco:pit_schema`` says how many levels to read.

    Returns:
        The level tables, the collection, and where each level table came from.

    Example:
        >>> levels, collection, sources = read_folder("cat/.tacocat")
        >>> sources
        ['cat/.tacocat/level0.parquet', 'cat/.tacocat/level1.parquet']
    """
    where = vsi.join(folder, COLLECTION_FILE)
    collection = parse_collection(read_all(where), where)
    levels, sources = read_level_files(levels_folder or folder, collection_depth(collection, where))
    return levels, collection, sources


class FolderContainer(OpenedContainer):
    """A TACO dataset stored as a folder.

    Example:
        >>> from taco_gdal.read.containers.base import Probe
        >>> FolderContainer.open(Probe("tiles", "tiles")).vsi_rule
        VsiRule(kind='folder', root='tiles/DATA')
    """

    format: ClassVar[str] = "folder"
    priority: ClassVar[int] = 30

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
        levels, collection, sources = read_folder(probe.path, vsi.join(probe.path, METADATA_DIR))
        root = vsi.join(probe.path, DATA_DIR)
        check_folder_paths(levels, sources, root)
        return cls(probe.path, levels, collection, VsiRule("folder", root), sources)
