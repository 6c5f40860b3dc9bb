"""TACOLLECTION.json: one COLLECTION for a dataset partitioned into several files (spec 6.6)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from taco_gdal.errors import TacoValidationError
from taco_gdal.format.names import TACOLLECTION_FILE
from taco_gdal.model.collection import collection_json_bytes
from taco_gdal.write._atomic import atomic_file
from taco_gdal.write._merge import check_collections, merge_collections
from taco_gdal.write._sources import read_collection

__all__ = ["create_tacollection"]


def create_tacollection(
    inputs: Sequence[str | os.PathLike[str]],
    output: str | os.PathLike[str],
    validate_schema: bool = True,
    overwrite: bool = False,
) -> Path:
    """Write ``<output>/TACOLLECTION.json`` merging the COLLECTION.json of ``inputs``.

    Args:
        inputs: TACO ZIPs or FOLDERs (local or remote), the partitions of one dataset.
        output: the folder that receives ``TACOLLECTION.json`` (created if missing).
        validate_schema: refuse inputs whose PIT structure or field schema differs
            from the first one's (TacoSchemaError listing each difference).

    Example:
        >>> create_tacollection(["a.tacozip", "b.tacozip"], "out/")
        PosixPath('/.../out/TACOLLECTION.json')
    """
    if not inputs:
        raise TacoValidationError("create_tacollection needs at least one input, got none")
    folder = Path(output).absolute()
    if folder.name == TACOLLECTION_FILE:
        folder = folder.parent
    collections = [read_collection(p) for p in inputs]
    files = [Path(os.fspath(p).rstrip("/")).name for p in inputs]
    if validate_schema:
        check_collections(collections, files)
    merged = merge_collections(collections, files)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / TACOLLECTION_FILE
    with atomic_file(target, overwrite) as f:
        f.write(collection_json_bytes(merged))
    return target
