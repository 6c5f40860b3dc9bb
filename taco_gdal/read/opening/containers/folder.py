"""TACO FOLDER: ``COLLECTION.json``, ``METADATA/levelK.parquet`` and ``DATA/``, read through VSI."""

from __future__ import annotations

from typing import Any, ClassVar, TypeAlias

import pyarrow as pa

from taco_gdal.format import vsi
from taco_gdal.format.names import COLLECTION_FILE, DATA_DIR, MAX_DEPTH, METADATA_DIR, level_file
from taco_gdal.io.vsi import read_all
from taco_gdal.read.opening.containers._deferred import DeferredColumns
from taco_gdal.read.opening.containers._parse import (
    collection_depth,
    parse_collection,
    parse_level_file_deferring,
)
from taco_gdal.read.opening.containers._paths import check_folder_paths
from taco_gdal.read.opening.containers.base import OpenedContainer, Probe, VsiRule, path_exists

__all__ = ["FolderContainer", "Metadata", "read_folder_deferring", "read_level_files"]

Metadata: TypeAlias = tuple[list[pa.Table], dict[str, Any], list[str], list[DeferredColumns | None]]
"""Level tables, COLLECTION.json, where each level came from, each level's deferred columns."""


def read_level_files(
    folder: str, depth: int | None
) -> tuple[list[pa.Table], list[str], list[DeferredColumns | None]]:
    """``{folder}/level0.parquet`` ... up to ``depth`` (unknown: until a file is missing)."""
    levels: list[pa.Table] = []
    sources: list[str] = []
    deferred: list[DeferredColumns | None] = []
    last = MAX_DEPTH if depth is None else depth
    for level in range(last + 1):
        path = vsi.join(folder, level_file(level))
        if depth is None and level > 0 and not path_exists(path):
            break
        table, later = parse_level_file_deferring(path, path)
        levels.append(table)
        sources.append(path)
        deferred.append(later)
    return levels, sources, deferred


def read_folder_deferring(folder: str, levels_folder: str | None = None) -> Metadata:
    """``{folder}/COLLECTION.json`` and the level files of ``levels_folder`` (default ``folder``).

    Example:
        >>> levels, collection, sources, deferred = read_folder_deferring("cat/.tacocat")
        >>> sources
        ['cat/.tacocat/level0.parquet', 'cat/.tacocat/level1.parquet']
    """
    where = vsi.join(folder, COLLECTION_FILE)
    collection = parse_collection(read_all(where), where)
    depth = collection_depth(collection, where)
    levels, sources, deferred = read_level_files(levels_folder or folder, depth)
    return levels, collection, sources, deferred


class FolderContainer(OpenedContainer):
    """A TACO dataset stored as a folder.

    Example:
        >>> from taco_gdal.read.opening.containers.base import Probe
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
        metadata = vsi.join(probe.path, METADATA_DIR)
        levels, collection, sources, deferred = read_folder_deferring(probe.path, metadata)
        root = vsi.join(probe.path, DATA_DIR)
        check_folder_paths(levels, sources, root)
        return cls(probe.path, levels, collection, VsiRule("folder", root), sources, deferred)
