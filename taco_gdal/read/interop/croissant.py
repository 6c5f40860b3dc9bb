"""Croissant 1.1 (with GeoCroissant properties) metadata for a TACO ZIP or FOLDER dataset.

The JSON-LD describes what is on disk, so ``mlcroissant`` reads the level tables
itself. A ZIP container is one ``FileObject`` (its SHA-256 streamed through
GDAL) and each level table a ``FileObject`` *contained in* it whose
``contentUrl`` is the member name: mlcroissant downloads and extracts the
archive, then reads that member as Parquet. (A contained ``FileSet`` would give
mlcroissant file paths, not rows.) A FOLDER dataset has one ``FileObject`` per
level Parquet file, each with its own SHA-256, since a folder has no single
checksum. Each level is
a ``RecordSet`` whose fields are typed from the Arrow schema; a deeper level's
``internal:parent_id`` references the ``internal:current_id`` of the level above.
"""

from __future__ import annotations

import hashlib
import os
from typing import TYPE_CHECKING, Any, Final

import pyarrow as pa

from taco_gdal.errors import TacoDependencyError, TacoQueryError
from taco_gdal.format.names import (
    CURRENT_ID,
    METADATA_DIR,
    PARENT_ID,
    level_file,
    level_member,
)

if TYPE_CHECKING:
    from types import ModuleType

    from taco_gdal.read.dataset import TacoDataset

__all__ = ["CROISSANT_CONTEXT", "require_mlcroissant", "to_croissant"]

INSTALL_HINT: Final = "pip install 'taco_gdal[croissant]'"

CROISSANT_CONTEXT: Final[dict[str, Any]] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "sc": "https://schema.org/",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "dct": "http://purl.org/dc/terms/",
    # GeoCroissant's namespace (its property geocr:coordinateReferenceSystem is used below)
    "geocr": "http://mlcommons.org/croissant/geo/",
    "arrayShape": "cr:arrayShape",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "containedIn": "cr:containedIn",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "description": {"@container": "@language"},
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileObject": "cr:fileObject",
    "fileProperty": "cr:fileProperty",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isArray": "cr:isArray",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "name": {"@container": "@language"},
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}
"""The Croissant 1.1 ``@context`` plus the GeoCroissant prefix."""

_PARQUET: Final = "application/x-parquet"
_CONTAINER_ID: Final = "container"


def require_mlcroissant() -> ModuleType:
    """The ``mlcroissant`` module, or a TacoDependencyError saying how to install it."""
    try:
        import mlcroissant  # type: ignore[import-untyped,unused-ignore]
    except ImportError as exc:
        raise TacoDependencyError(
            f"reading Croissant metadata needs mlcroissant: expected an importable "
            f"'mlcroissant' module, found none ({exc}); install it with: {INSTALL_HINT}"
        ) from exc
    module: ModuleType = mlcroissant
    return module


def _data_type(kind: pa.DataType) -> str | None:
    """The Croissant ``dataType`` of an Arrow type (None: no Croissant equivalent)."""
    if pa.types.is_boolean(kind):
        return "sc:Boolean"
    if pa.types.is_integer(kind):
        return "sc:Integer"
    if pa.types.is_floating(kind) or pa.types.is_decimal(kind):
        return "sc:Float"
    if pa.types.is_timestamp(kind):
        return "sc:DateTime"
    if pa.types.is_date(kind):
        return "sc:Date"
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return "sc:Text"
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
        return "sc:Text"  # WKB and blobs: mlcroissant hands sc:Text values out as bytes
    return None


def _field(level: int, column: pa.Field, source: dict[str, Any]) -> dict[str, Any] | None:
    kind, is_array = column.type, False
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        kind, is_array = kind.value_type, True
    data_type = _data_type(kind)
    if data_type is None:
        return None
    field: dict[str, Any] = {
        "@type": "cr:Field",
        "@id": f"level{level}/{column.name}",
        "name": column.name,
        "dataType": data_type,
        "source": {**source, "extract": {"column": column.name}},
    }
    if is_array:
        field["isArray"] = True
        field["arrayShape"] = "-1"
    if level > 0 and column.name == PARENT_ID:
        field["references"] = {"field": {"@id": f"level{level - 1}/{CURRENT_ID}"}}
    return field


def _record_set(level: int, schema: pa.Schema, source: dict[str, Any]) -> dict[str, Any]:
    fields = [_field(level, column, source) for column in schema]
    skipped = [c.name for c, f in zip(schema, fields, strict=True) if f is None]
    note = f" Columns without a Croissant type, left out: {', '.join(skipped)}." if skipped else ""
    record: dict[str, Any] = {
        "@type": "cr:RecordSet",
        "@id": f"level{level}",
        "name": f"level{level}",
        "description": f"The samples at hierarchy level {level}, one record per row.{note}",
        "field": [f for f in fields if f is not None],
    }
    if CURRENT_ID in schema.names:
        record["key"] = {"@id": f"level{level}/{CURRENT_ID}"}
    return record


def _sha256(path: str) -> tuple[str, int]:
    """Hex SHA-256 and size of ``path``, streamed through GDAL in bounded memory."""
    from taco_gdal.io.stream import Span, stream_spans
    from taco_gdal.io.vsi import file_size

    size = file_size(path)
    digest = hashlib.sha256()
    stream_spans(path, [Span(0, size, digest.update)])
    return digest.hexdigest(), size


def _url(vsi_path: str, relative_to: str | None) -> str:
    """The location a Croissant reader opens: a URL, or a local path (relative if asked)."""
    if vsi_path.startswith("/vsicurl/"):
        return vsi_path[len("/vsicurl/") :]
    if vsi_path.startswith("/vsis3/"):
        return "s3://" + vsi_path[len("/vsis3/") :]
    if relative_to is not None and not vsi_path.startswith("/vsi"):
        return os.path.relpath(vsi_path, relative_to)
    return vsi_path


def _file_object(uid: str, path: str, url: str, fmt: str, **extra: Any) -> dict[str, Any]:
    sha256, size = _sha256(path)
    return {
        "@type": "cr:FileObject",
        "@id": uid,
        "name": uid,
        "contentUrl": url,
        "contentSize": f"{size} B",
        "encodingFormat": fmt,
        "sha256": sha256,
        **extra,
    }


def _distribution(ds: TacoDataset, relative_to: str | None) -> list[dict[str, Any]]:
    """The files, and for each level the ``source`` its fields read from (last item)."""
    depth = ds.max_depth + 1
    if ds.format == "zip":
        container = _file_object(
            _CONTAINER_ID,
            ds.path,
            _url(ds.path, relative_to),
            "application/zip",
            description="The TACO ZIP container (every member stored uncompressed).",
        )
        members = [
            {
                "@type": "cr:FileObject",
                "@id": level_file(level),
                "name": level_file(level),
                "containedIn": {"@id": _CONTAINER_ID},
                "contentUrl": level_member(level),
                "encodingFormat": _PARQUET,
            }
            for level in range(depth)
        ]
        return [container, *members]
    if ds.format == "folder":
        return [
            _file_object(
                level_file(level),
                os.path.join(ds.path, METADATA_DIR, level_file(level)),
                _url(os.path.join(ds.path, METADATA_DIR, level_file(level)), relative_to),
                _PARQUET,
            )
            for level in range(depth)
        ]
    raise TacoQueryError(
        f"{ds.path}: Croissant metadata describes a TACO ZIP or FOLDER dataset, found a "
        f"{ds.format!r} dataset; export() it to a ZIP or FOLDER first"
    )


def _geo(ds: TacoDataset) -> dict[str, Any]:
    """GeoCroissant's extent and CRS from the COLLECTION extent.

    GeoCroissant takes the extent from schema.org (``spatialCoverage`` with a
    ``GeoShape`` box, ``temporalCoverage``) and adds ``geocr:coordinateReferenceSystem``.
    """
    extent = ds.extent or {}
    out: dict[str, Any] = {}
    bbox = extent.get("spatial")
    if isinstance(bbox, list | tuple) and len(bbox) == 4:
        west, south, east, north = (float(v) for v in bbox)
        out["spatialCoverage"] = {
            "@type": "Place",
            "geo": {"@type": "GeoShape", "box": f"{south} {west} {north} {east}"},
        }
        out["geocr:coordinateReferenceSystem"] = "EPSG:4326"
    times = extent.get("temporal")
    if isinstance(times, list | tuple) and len(times) == 2 and all(times):
        out["temporalCoverage"] = f"{times[0]}/{times[1]}"
    return out


def to_croissant(ds: TacoDataset, relative_to: str | None = None) -> dict[str, Any]:
    """Croissant 1.1 JSON-LD describing ``ds``'s container and level tables.

    Args:
        ds: a dataset loaded from a TACO ZIP or FOLDER, without filters (Croissant
            describes stored files, not a query over them).
        relative_to: write local ``contentUrl`` values relative to this folder
            (where the JSON-LD will live); absolute paths otherwise. URLs stay URLs.

    Raises:
        TacoQueryError: a filtered view, or a container other than ZIP or FOLDER.
        TacoIOError: the container cannot be read to compute its SHA-256.
    """
    if ds.state.steps:
        raise TacoQueryError(
            f"{ds.path}: Croissant metadata describes the stored dataset, found a filtered "
            f"view ({len(ds.state.steps)} step(s)); export() the view and describe that"
        )
    files = _distribution(ds, relative_to)
    sources = {
        level: {"fileObject": {"@id": level_file(level)}} for level in range(ds.max_depth + 1)
    }
    keys = ", ".join(ds.keywords) if ds.keywords else None
    doc: dict[str, Any] = {
        "@context": CROISSANT_CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": "http://mlcommons.org/croissant/1.1",
        "name": ds.id or os.path.basename(ds.path.rstrip("/")),
        "description": ds.description or ds.title or "A TACO dataset.",
        "url": _url(ds.path, relative_to),
        "license": ds.licenses[0] if len(ds.licenses) == 1 else ds.licenses,
        "version": ds.version or "0.0.0",
        "creator": [{"@type": "Organization", "name": str(p.get("name"))} for p in ds.providers],
        "keywords": keys,
        "distribution": files,
        "recordSet": [
            _record_set(level, ds.state.base.schema(level), sources[level])
            for level in range(ds.max_depth + 1)
        ],
        **_geo(ds),
    }
    return {k: v for k, v in doc.items() if v not in (None, [], "")}
