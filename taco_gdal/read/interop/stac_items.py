"""STAC Items -> :class:`~taco_gdal.model.Sample` objects, as ``samples_from_rasters`` makes files.

What ``taco create --from-stac ITEMS OUT`` calls.  One FOLDER per Item with a
FILE child per chosen asset (a FILE sample when one asset is chosen).  Item
properties become metadata columns; the times go into the STAC extension's time
columns, ``proj:*`` into ``stac:crs`` / ``stac:geotransform`` /
``stac:tensor_shape``, and the footprint into ``istac:geometry``: the grid's
outline in its own CRS when the asset's ``proj:*`` fields give it, the Item's
EPSG:4326 geometry otherwise.  Each asset is read once through GDAL (local,
``/vsicurl/``, ``/vsis3/``; the byte range of ``archive:start`` / ``archive:end``
when given) under the read profile, checked against ``file:size`` and
``file:checksum`` and, when remote, kept in a temporary file the sample owns
until the writer copies it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urljoin

import pyarrow as pa
import shapely

from taco_gdal.errors import (
    TacoChecksumError,
    TacoFormatError,
    TacoPITError,
    TacoQueryError,
    TacoValidationError,
)
from taco_gdal.extensions._geo import raster_footprint
from taco_gdal.extensions.istac import ISTAC
from taco_gdal.extensions.stac import STAC
from taco_gdal.extensions.stac_fields import (
    ARCHIVE_END,
    ARCHIVE_START,
    from_multihash,
    geotransform_of,
    require_stac,
)
from taco_gdal.format.checksum import digest_value, parse_checksum
from taco_gdal.format.names import STAC_CRS
from taco_gdal.format.vsi import is_remote, to_vsi
from taco_gdal.read.spatial.footprints import compute_footprints

if TYPE_CHECKING:
    from taco_gdal.model.sample import Sample

__all__ = ["item_dicts", "samples_from_stac"]

ItemSource = Any
"""Items: an ItemCollection, Items or dicts, a JSON / NDJSON / stac-geoparquet file or URL,
a static catalog's ``catalog.json``, or a ``pystac_client`` search's ``items()``."""

_TIME_KEYS: Final = ("datetime", "start_datetime", "end_datetime")
_NOT_PROPERTIES: Final = ("proj:", "file:", "archive:", "stac:", "istac:")
_WGS84: Final = "EPSG:4326"


def _read_text(location: str) -> str:
    from taco_gdal.env import Env
    from taco_gdal.io.vsi import read_all

    with Env():
        return read_all(to_vsi(location)).decode("utf-8")


def _from_file(location: str) -> list[dict[str, Any]]:
    """Item dicts of a file: stac-geoparquet, NDJSON, an ItemCollection, an Item or a catalog."""
    lowered = location.lower()
    if lowered.endswith((".parquet", ".geoparquet")):
        import pyarrow.parquet as pq
        from stac_geoparquet.arrow import stac_table_to_items

        try:
            return [dict(i) for i in stac_table_to_items(pq.read_table(location))]
        except (OSError, ValueError, KeyError) as exc:
            raise TacoFormatError(f"{location}: expected stac-geoparquet, found: {exc}") from exc
    text = _read_text(location)
    try:
        if lowered.endswith((".ndjson", ".jsonl")):
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        document = json.loads(text)
    except ValueError as exc:
        raise TacoFormatError(f"{location}: expected STAC JSON, found: {exc}") from exc
    kind = document.get("type") if isinstance(document, dict) else None
    if kind == "FeatureCollection":
        return _with_base(list(document.get("features") or []), location)
    if kind == "Feature":
        return _with_base([document], location)
    if kind in ("Catalog", "Collection"):
        pystac = require_stac("samples_from_stac()")
        catalog = pystac.read_file(location)
        catalog.make_all_asset_hrefs_absolute()
        return [item.to_dict() for item in catalog.get_items(recursive=True)]
    raise TacoFormatError(
        f"{location}: expected a STAC ItemCollection, Item, Catalog or Collection, found "
        f"type {kind!r}"
    )


def _with_base(items: list[Any], location: str) -> list[Any]:
    """Relative asset hrefs of a file's Items resolved against the file's location."""
    base = location if "://" in location else Path(location).resolve().as_uri()
    for item in items:
        for asset in (item.get("assets") or {}).values() if isinstance(item, dict) else ():
            href = asset.get("href") if isinstance(asset, dict) else None
            if isinstance(href, str) and "://" not in href and not href.startswith("/"):
                asset["href"] = urljoin(base, href)
    return items


def item_dicts(items: ItemSource) -> list[dict[str, Any]]:
    """The Items of ``items`` as STAC dicts (see :data:`ItemSource`).

    Raises:
        TacoFormatError: a file that is not STAC, or an entry that is not an Item.

    Example:
        >>> _ = ds.to_stac_geoparquet("items.parquet")
        >>> [i["id"] for i in item_dicts("items.parquet")]
        ['s000', 's001', 's002', 's003']
    """
    if isinstance(items, str | os.PathLike):
        return _from_file(os.fspath(items))
    out = []
    entries: Any = [items] if isinstance(items, Mapping) else getattr(items, "items", items)
    entries = entries() if callable(entries) else entries  # a pystac_client search
    for position, item in enumerate(entries):
        value = item.to_dict() if hasattr(item, "to_dict") else item
        if not isinstance(value, Mapping) or value.get("type") != "Feature":
            raise TacoFormatError(
                f"samples_from_stac: entry {position}: expected a STAC Item (a pystac.Item or a "
                f"dict with type 'Feature'), found {type(item).__name__}"
            )
        out.append(dict(value))
    return out


def _time(value: Any, where: str) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError as exc:
        raise TacoFormatError(f"{where}: expected an RFC 3339 time, found {value!r}") from exc
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(UTC).replace(tzinfo=None)
    return parsed


def _fetch(href: str, asset: Mapping[str, Any], where: str) -> tuple[str, bytes | None, int]:
    """``(gdal path, bytes or None for a local whole file, size)``, checked against file:*."""
    from taco_gdal.env import Env
    from taco_gdal.io.vsi import file_size, read_all, read_range

    path = to_vsi(href)
    start, end = asset.get(ARCHIVE_START), asset.get(ARCHIVE_END)
    with Env():
        if isinstance(start, int) and isinstance(end, int) and end >= start:
            data: bytes | None = read_range(path, start, end - start + 1, what=where)
        elif is_remote(path) or path.startswith("/vsi"):
            data = read_all(path)
        else:
            data = None
    size = len(data) if data is not None else file_size(path)
    expected = asset.get("file:size")
    if expected is not None and expected != size:
        raise TacoChecksumError(
            f"{where}: file:size says {expected} bytes, found {size} at {href!r}"
        )
    checksum = asset.get("file:checksum")
    stored = from_multihash(checksum, where) if checksum is not None else None
    if stored is not None:
        digest = parse_checksum(stored, where)
        actual = digest_value(
            digest.algorithm, data if data is not None else Path(path).read_bytes()
        )
        if actual != stored:
            raise TacoChecksumError(
                f"{where}: file:checksum says {checksum}, the bytes at {href!r} give "
                f"{actual} ({digest.algorithm})"
            )
    return path, data, size


def _proj(
    asset: Mapping[str, Any], props: Mapping[str, Any]
) -> tuple[str, list[float], list[int]] | None:
    """``(crs, geotransform, [rows, cols])`` of an asset (or its Item), or None when unknown."""

    def field(name: str) -> Any:
        return asset.get(name, props.get(name))

    crs = field("proj:code") or field("proj:wkt2")
    if crs is None and field("proj:epsg") is not None:
        crs = f"EPSG:{int(field('proj:epsg'))}"
    transform, shape = field("proj:transform"), field("proj:shape")
    if not crs or transform is None or shape is None:
        return None
    return str(crs), geotransform_of(transform, "proj:transform"), [int(v) for v in shape][-2:]


def _outlines(outline: bytes, crs: str, geometry: Any) -> bool:
    """Whether the Item's geometry is exactly the footprint the reader makes of the grid's outline.

    Then the outline in the grid's own CRS is kept, as ``samples_from_rasters``
    keeps it, and exports back to the same geometry; otherwise the Item's
    EPSG:4326 geometry is kept as it is, so that it comes back unchanged.
    """
    if not geometry:
        return True
    table = pa.table({"stac:outline": [outline], STAC_CRS: [crs]})
    try:
        made = compute_footprints(table, "stac:outline").geometries[0]
    except TacoQueryError:
        return False
    return bool(made is not None and made.equals_exact(shapely.geometry.shape(geometry), 0.0))


def _bands(asset: Mapping[str, Any], path: str) -> int:
    """Band count: ``raster:bands`` / ``eo:bands`` when listed, else what GDAL sees, else 1."""
    for key in ("raster:bands", "eo:bands", "bands"):
        if isinstance(asset.get(key), list) and asset[key]:
            return len(asset[key])
    from taco_gdal.errors import TacoIOError
    from taco_gdal.io.sample import open_raster

    try:  # the local copy, or a local asset: no request
        with open_raster(path) as src:
            return int(src.count) or 1
    except TacoIOError:
        return 1


def _file_sample(
    sample_id: str, href: str, asset: Mapping[str, Any], item: Mapping[str, Any],
    times: tuple[datetime, datetime | None], temp_dir: str | os.PathLike[str] | None,
    metadata: Mapping[str, Any], single: bool,
) -> Sample:  # fmt: skip
    from taco_gdal.model.sample import Sample

    where = f"Item {item['id']!r} asset {sample_id!r}"
    if asset.get("datetime") or asset.get("start_datetime"):  # the asset's own time wins
        own = _time(asset.get("datetime") or asset.get("start_datetime"), where)
        end = _time(asset.get("end_datetime"), where) if asset.get("datetime") is None else None
        times = (own or times[0], end)
    path, data, _ = _fetch(href, asset, where)
    sample = Sample(sample_id, data if data is not None else path, temp_dir=temp_dir, **metadata)
    grid = _proj(asset, item.get("properties") or {})
    if grid is not None:
        crs, gt, (rows, cols) = grid
        shape = (_bands(asset, sample.file_path or path), rows, cols)
        sample.extend_with(STAC(crs, shape, gt, times[0], None, times[1]))
        outline = raster_footprint(gt, rows, cols)
        if not single or _outlines(outline, crs, item.get("geometry")):
            sample.extend_with(ISTAC(crs, outline, times[0], times[1]))
        elif item.get("geometry"):
            geometry = shapely.to_wkb(shapely.geometry.shape(item["geometry"]))
            sample.extend_with(ISTAC(_WGS84, geometry, times[0], times[1]))
    elif single and item.get("geometry"):
        geometry = shapely.to_wkb(shapely.geometry.shape(item["geometry"]))
        sample.extend_with(ISTAC(_WGS84, geometry, times[0], times[1]))
    return sample


def _chosen(item: Mapping[str, Any], assets: list[str] | None) -> list[str]:
    found = item.get("assets")
    if not isinstance(found, Mapping) or not found:
        raise TacoValidationError(f"Item {item.get('id')!r}: expected assets, found {found!r}")
    if assets is None:
        data = [k for k, a in found.items() if "data" in (a.get("roles") or [])]
        return data or list(found)
    missing = [k for k in assets if k not in found]
    if missing:
        raise TacoValidationError(
            f"Item {item['id']!r}: expected assets {assets}, missing {missing} (it has "
            f"{list(found)})"
        )
    return list(assets)


def _properties(props: Mapping[str, Any]) -> dict[str, Any]:
    """Scalar Item properties that are not times, grids or file fields: metadata columns."""
    return {
        k: v for k, v in props.items()
        if k not in _TIME_KEYS and not k.startswith(_NOT_PROPERTIES)
        and isinstance(v, str | int | float | bool) and v is not None
    }  # fmt: skip


def samples_from_stac(
    items: ItemSource,
    assets: Iterable[str] | None = None,
    *,
    temp_dir: str | os.PathLike[str] | None = None,
) -> list[Sample]:
    """One sample per STAC Item: a FOLDER of its assets, or a FILE when one asset is chosen.

    Args:
        items: see :data:`ItemSource`.
        assets: asset keys to keep (all must exist in every Item); by default
            the assets with role ``data``, or all assets when none has a role.
        temp_dir: where remote assets wait for the writer (the system's by default).

    Every Item must give the same asset keys (the PIT rule: every root shaped
    alike); an Item that does not is refused, not padded.

    Raises:
        TacoValidationError: an Item without id, time or the chosen assets.
        TacoPITError: an Item's assets differ from the first Item's.
        TacoChecksumError: an asset's bytes disagree with its file:size / file:checksum.
        TacoFormatError: a file that is not STAC, or malformed STAC fields.

    Example:
        >>> samples = samples_from_stac(tiles.to_stac(), assets=["b04"])
        >>> [(s.id, s.type) for s in samples], samples[0]["stac:crs"]
        ([('tile000', 'FILE'), ('tile001', 'FILE'), ('tile002', 'FILE')], '...')
        >>> from taco_gdal.model import Taco, Tortilla
        >>> taco = Taco(
        ...     Tortilla(samples), id="b04", dataset_version="1.0.0", licenses=["CC-BY-4.0"],
        ...     description="B04 of each tile", providers=[{"name": "me"}], tasks=["other"],
        ... )
        >>> taco_gdal.create(taco, "b04.tacozip", quiet=True)
        [PosixPath('.../b04.tacozip')]
    """
    from taco_gdal.model.sample import Sample
    from taco_gdal.model.tortilla import Tortilla

    wanted = None if assets is None else list(assets)
    first_keys: list[str] | None = None
    samples = []
    for item in item_dicts(items):
        item_id = item.get("id")
        if not isinstance(item_id, str) or not item_id:
            raise TacoValidationError(f"samples_from_stac: expected an Item id, found {item_id!r}")
        props = item.get("properties") or {}
        where = f"Item {item_id!r}"
        start = _time(props.get("datetime") or props.get("start_datetime"), where)
        if start is None:
            raise TacoValidationError(f"{where}: expected datetime or start_datetime, found none")
        end = _time(props.get("end_datetime"), where) if props.get("datetime") is None else None
        keys = _chosen(item, wanted)
        if first_keys is None:
            first_keys = keys
        elif keys != first_keys:
            raise TacoPITError(
                f"{where}: expected the assets {first_keys} of the first Item (every sample "
                f"shaped alike), found {keys}; choose common assets with assets=[...]"
            )
        metadata = _properties(props)
        hrefs = {k: str(item["assets"][k]["href"]) for k in keys}
        if len(keys) == 1:
            key = keys[0]
            samples.append(_file_sample(item_id, hrefs[key], item["assets"][key], item,
                                        (start, end), temp_dir, metadata, True))  # fmt: skip
            continue
        children = [
            _file_sample(k, hrefs[k], item["assets"][k], item, (start, end), temp_dir, {}, False)
            for k in keys
        ]
        folder = Sample(item_id, Tortilla(children), **metadata)
        if item.get("geometry"):
            wkb = shapely.to_wkb(shapely.geometry.shape(item["geometry"]))
            folder.extend_with(ISTAC(_WGS84, wkb, start, end))
        samples.append(folder)
    if not samples:
        raise TacoValidationError("samples_from_stac: expected at least one Item, found none")
    return samples
