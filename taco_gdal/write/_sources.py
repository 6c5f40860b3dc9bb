"""Read the metadata of existing TACO ZIPs (through the TACO_HEADER) and FOLDERs, anywhere."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from taco_gdal.errors import TacoFormatError, TacoIOError
from taco_gdal.format.header import HEADER_SIZE, HeaderEntry, parse_header
from taco_gdal.format.names import (
    COLLECTION_FILE,
    MAX_LEVELS,
    METADATA_DIR,
    ZIP_SUFFIXES,
    level_file,
)
from taco_gdal.format.vsi import join, to_vsi
from taco_gdal.io.arrowbuf import owned_reader
from taco_gdal.io.vsi import VSIFile, read_all

__all__ = [
    "DatasetMetadata",
    "is_zip_path",
    "read_collection",
    "read_metadata",
    "read_zip_metadata",
]


@dataclass(frozen=True)
class DatasetMetadata:
    """Level tables (as stored) and COLLECTION.json of one dataset."""

    path: str
    """The dataset's GDAL path."""
    levels: list[pa.Table]
    collection: dict[str, Any]


def is_zip_path(path: str | os.PathLike[str]) -> bool:
    return os.fspath(path).lower().endswith(ZIP_SUFFIXES)


def _parse_collection(data: bytes, where: str) -> dict[str, Any]:
    from taco_gdal.read.opening.containers._limits import check_schemas, loads_json

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TacoFormatError(f"{where}: COLLECTION.json is not valid UTF-8 JSON: {exc}") from exc
    value = loads_json(text, f"{where}: COLLECTION.json")  # size, depth and number limits
    if not isinstance(value, dict):
        raise TacoFormatError(
            f"{where}: COLLECTION.json must hold a JSON object, found {type(value).__name__}"
        )
    check_schemas(value, f"{where}: COLLECTION.json")
    return value


def _parquet(data: bytes, where: str) -> pa.Table:
    try:
        return pq.read_table(owned_reader(data))
    except (pa.ArrowInvalid, OSError) as exc:
        raise TacoFormatError(f"{where}: not a readable parquet file: {exc}") from exc


def _zip_entries(f: VSIFile) -> list[HeaderEntry]:
    header = parse_header(f.read_at(0, HEADER_SIZE), f.path)
    entries = [e for e in header.entries if e.length > 0]
    if len(entries) < 2:
        raise TacoFormatError(
            f"{f.path}: TACO_HEADER must point at level0.parquet and COLLECTION.json, "
            f"found {len(entries)} non-empty entries"
        )
    return entries


def read_collection(path: str | os.PathLike[str]) -> dict[str, Any]:
    """COLLECTION.json of a ZIP (last TACO_HEADER entry) or FOLDER dataset."""
    vsi = to_vsi(path)
    if not is_zip_path(path):
        collection_path = join(vsi, COLLECTION_FILE)
        try:
            return _parse_collection(read_all(collection_path), collection_path)
        except TacoIOError as exc:
            raise TacoFormatError(f"{vsi}: not a TACO folder, {COLLECTION_FILE} missing") from exc
    with VSIFile(vsi) as f:
        last = _zip_entries(f)[-1]
        return _parse_collection(f.read_exact(last.offset, last.length, COLLECTION_FILE), vsi)


def read_zip_metadata(path: str | os.PathLike[str]) -> DatasetMetadata:
    """Levels and COLLECTION.json of a TACO ZIP, located through its TACO_HEADER."""
    vsi = to_vsi(path)
    with VSIFile(vsi) as f:
        entries = _zip_entries(f)
        blobs = [
            f.read_exact(e.offset, e.length, f"header entry {i}") for i, e in enumerate(entries)
        ]
    levels = [_parquet(blob, f"{vsi} level{i}") for i, blob in enumerate(blobs[:-1])]
    return DatasetMetadata(vsi, levels, _parse_collection(blobs[-1], vsi))


def _exists(path: str) -> bool:
    from osgeo import gdal

    return gdal.VSIStatL(path) is not None


def read_folder_metadata(path: str | os.PathLike[str]) -> DatasetMetadata:
    """Levels and COLLECTION.json of a TACO FOLDER (``METADATA/levelN.parquet``)."""
    root = to_vsi(path)
    collection = read_collection(path)
    levels = []
    for level in range(MAX_LEVELS):
        level_path = join(root, METADATA_DIR, level_file(level))
        if not _exists(level_path):
            break
        levels.append(_parquet(read_all(level_path), level_path))
    if not levels:
        raise TacoFormatError(f"{root}: no {METADATA_DIR}/{level_file(0)}")
    return DatasetMetadata(root, levels, collection)


def read_metadata(path: str | os.PathLike[str]) -> DatasetMetadata:
    return read_zip_metadata(path) if is_zip_path(path) else read_folder_metadata(path)
