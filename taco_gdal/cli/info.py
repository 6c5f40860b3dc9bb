"""``taco info PATH``: what a dataset is, as JSON (schema ``info``) or text."""

from __future__ import annotations

import os
from collections import Counter
from typing import TYPE_CHECKING, Any

import click

from taco_gdal.cli._options import Common, verb
from taco_gdal.cli._output import emit_json

if TYPE_CHECKING:
    from taco_gdal.read.dataset import TacoDataset

__all__ = ["command", "describe"]


def _level(ds: TacoDataset, level: int, stored: int) -> dict[str, Any]:
    from taco_gdal.format.names import FILE, FOLDER, SIZE, TYPE

    table = ds.to_arrow(level)
    types = Counter(str(v) for v in table.column(TYPE).to_pylist())
    sample_bytes: int | None = None
    if SIZE in table.column_names:
        sizes = table.column(SIZE).to_pylist()
        kinds = table.column(TYPE).to_pylist()
        sample_bytes = sum(int(s or 0) for s, k in zip(sizes, kinds, strict=True) if k == FILE)
    return {
        "level": level,
        "samples": table.num_rows,
        "files": types.get(FILE, 0),
        "folders": types.get(FOLDER, 0),
        "padding": stored - table.num_rows,
        "file_bytes": sample_bytes,
        "columns": table.column_names,
    }


def _folder_bytes(path: str) -> int | None:
    if not os.path.isdir(path):
        return None
    total = 0
    for root, _dirs, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return total


def _parts(ds: TacoDataset) -> list[dict[str, Any]]:
    from taco_gdal.format.names import GDAL_VSI
    from taco_gdal.format.vsi import SUBFILE_PREFIX, parse_subfile
    from taco_gdal.io.vsi import file_size

    counts: Counter[str] = Counter()
    for location in ds.to_arrow(0).column(GDAL_VSI).to_pylist():
        if isinstance(location, str) and location.startswith(SUBFILE_PREFIX):
            counts[parse_subfile(location).container] += 1
    return [{"path": part, "samples": n, "bytes": file_size(part)} for part, n in counts.items()]


def _container(ds: TacoDataset) -> dict[str, Any]:
    from taco_gdal.format.names import TACO_VERSION_KEY
    from taco_gdal.io.vsi import file_size

    parts: list[dict[str, Any]] | None = None
    size: int | None
    if ds.format == "folder":
        size = _folder_bytes(ds.path)
    elif ds.format == "tacocat":
        parts = _parts(ds)
        size = sum(int(p["bytes"]) for p in parts)
    else:
        size = file_size(ds.path) if not os.path.isdir(ds.path) else _folder_bytes(ds.path)
    return {
        "format": ds.format,
        "taco_version": ds.collection.get(TACO_VERSION_KEY),
        "bytes": size,
        "parts": parts,
    }


def describe(ds: TacoDataset) -> dict[str, Any]:
    """The ``taco info`` document of a loaded dataset.

    Example:
        >>> describe(taco_gdal.load("dataset.tacozip"))["levels"][0]["samples"]
        4
    """
    stored = ds.level_counts()
    return {
        "path": ds.path,
        "id": ds.id,
        "title": ds.title,
        "version": ds.version,
        "description": ds.description,
        "licenses": ds.licenses,
        "tasks": ds.tasks,
        "container": _container(ds),
        "max_depth": ds.max_depth,
        "pit_schema": ds.pit_schema,
        "levels": [_level(ds, k, stored[k]) for k in range(ds.max_depth + 1)],
        "extent": ds.extent,
    }


def _text(info: dict[str, Any]) -> str:
    container = info["container"]
    lines = [
        f"{info['id']} {info['version']}: {info['title'] or ''}".rstrip(),
        f"  path:      {info['path']}",
        f"  container: {container['format']} (TACO {container['taco_version']}), "
        f"{container['bytes']} bytes",
    ]
    for level in info["levels"]:
        lines.append(
            f"  level{level['level']}:    {level['samples']} samples "
            f"({level['files']} FILE, {level['folders']} FOLDER, {level['padding']} padding)"
        )
    for part in container["parts"] or []:
        lines.append(f"  part:      {part['path']} ({part['samples']} samples)")
    extent = info["extent"] or {}
    if extent:
        lines.append(f"  extent:    {extent.get('spatial')} {extent.get('temporal')}")
    return "\n".join(lines)


@verb(
    "info",
    examples=[
        "taco info dataset.tacozip",
        "taco info https://host/data/.tacocat --format text",
        "taco info dataset.tacozip | jq '.levels[].samples'",
    ],
)
@click.argument("path")
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["json", "text"]),
    default="json",
    help="Output format (--json is the same as --format json).",
)
def info(common: Common, path: str, fmt: str) -> None:
    """Describe a TACO dataset: collection, hierarchy, counts per level, extent, size.

    PATH is a .tacozip, a TACO folder, a TACOCAT (.tacocat folder or __TACOCAT__),
    a plugin format (.caf, .taridx), local or remote (http(s)://, s3://, /vsi...).
    """
    from taco_gdal.read.load import load

    with load(path) as ds:
        document = describe(ds)
    if fmt == "json" or common.json:
        emit_json(document)
    else:
        click.echo(_text(document))


command = info
