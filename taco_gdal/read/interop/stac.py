"""A dataset's current view as STAC: Items, a Collection, and JSON / NDJSON / stac-geoparquet files.

One Item per sample of the chosen level (padding left out): a FILE sample is an
Item with one asset (key ``data``), a FOLDER sample an Item whose assets are its
FILE children (key = child id).  Items carry the EPSG:4326 footprint (cut at the
antimeridian, where ``bbox`` then has ``west > east``), the acquisition time
(``datetime``, or ``start_datetime`` / ``end_datetime`` when the sample has an
end), the projection and file extensions on each asset, and the sample's scalar
metadata as properties.  A FOLDER without its own footprint or time takes the
union of its children's.

Items are built as plain dicts in batches of rows, with the field names of
pystac's extension modules, so a million samples stream to a file in bounded
memory; :func:`to_item_collection` turns them into ``pystac.Item`` objects.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import shapely

from taco_gdal.errors import TacoValidationError
from taco_gdal.extensions.stac_fields import (
    ARCHIVE_END,
    ARCHIVE_FORMAT,
    ARCHIVE_SCHEMA,
    ARCHIVE_START,
    proj_transform_of,
    require_stac,
    to_multihash,
)
from taco_gdal.format.names import (
    CHECKSUM,
    CURRENT_ID,
    DATA_TYPE,
    FOLDER,
    GDAL_VSI,
    ID,
    ISTAC_GEOMETRY,
    NODATA,
    PARENT_ID,
    RELATIVE_PATH,
    SIZE,
    STAC_CENTROID,
    STAC_CRS,
    STAC_GEOTRANSFORM,
    STAC_TENSOR_SHAPE,
    TYPE,
)
from taco_gdal.format.vsi import SUBFILE_PREFIX, parse_subfile
from taco_gdal.read.frames._geoframe import footprints_for_rows
from taco_gdal.read.interop.stac_rows import Children, level_batches
from taco_gdal.read.spatial.footprints import compute_footprints

if TYPE_CHECKING:
    from taco_gdal.read.query.state import QueryState

__all__ = ["BATCH", "Href", "item_batches", "stac_collection", "to_item_collection"]

Href = Literal["gdal", "url"]
"""Asset hrefs: GDAL paths (``/vsisubfile/...``), or the container's URL plus a byte range."""

BATCH: Final = 20_000
_STARTS: Final = ("stac:time_start", "istac:time_start")
_ENDS: Final = ("stac:time_end", "istac:time_end")
_NOT_PROPERTIES: Final = (ID, TYPE, CHECKSUM, DATA_TYPE, NODATA)
"""Columns that are not Item properties: the pixel type and nodata describe the asset's
file (a nullable nodata left out of some Items would split their schema on import)."""
_PROPERTY_TYPES: Final = (pa.types.is_boolean, pa.types.is_integer, pa.types.is_floating,
                          pa.types.is_string, pa.types.is_large_string, pa.types.is_timestamp,
                          pa.types.is_date)  # fmt: skip


def _iso(column: pa.ChunkedArray | None, rows: int = 0) -> list[str | None]:
    """RFC 3339 UTC strings of a timestamp column (whole seconds when no value has a fraction)."""
    if column is None:
        return [None] * rows
    micros = column.cast(pa.timestamp("us")).cast(pa.int64()).to_numpy(zero_copy_only=False)
    valid = ~np.asarray(column.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    values = micros[valid].astype("datetime64[us]")
    unit = "s" if not (values.astype(np.int64) % 1_000_000).any() else "us"
    out: list[str | None] = [None] * len(micros)
    texts = np.datetime_as_string(values, unit=unit)  # type: ignore[call-overload]
    for i, text in zip(np.flatnonzero(valid), texts, strict=True):
        out[i] = f"{text}Z"
    return out


def _first(table: pa.Table, names: tuple[str, ...]) -> pa.ChunkedArray | None:
    return next((table.column(n) for n in names if n in table.column_names), None)


def _raster_outlines(table: pa.Table) -> pa.Array:
    """WKB outline (in the sample's CRS) of each row's grid; null where the grid is unknown."""
    rows = table.num_rows
    gt_col = table.column(STAC_GEOTRANSFORM).combine_chunks()
    shape_col = table.column(STAC_TENSOR_SHAPE).combine_chunks()
    known = np.asarray(
        pc.and_(pc.equal(pc.list_value_length(gt_col), 6), pc.greater_equal(
            pc.list_value_length(shape_col), 2)).fill_null(False), dtype=bool,
    )  # fmt: skip
    out = np.full(rows, None, dtype=object)
    if known.any():
        where = np.flatnonzero(known)
        gt = np.asarray(pc.list_flatten(gt_col.take(where)), dtype=np.float64).reshape(-1, 6)
        shapes = shape_col.take(where)
        flat = np.asarray(pc.list_flatten(shapes), dtype=np.float64)
        ends = np.asarray(shapes.offsets, dtype=np.int64)[1:] - shapes.offsets[0].as_py()
        height, width = flat[ends - 2], flat[ends - 1]
        col = np.column_stack([np.zeros_like(width), width, width, np.zeros_like(width)])
        row = np.column_stack([np.zeros_like(height), np.zeros_like(height), height, height])
        x = gt[:, [0]] + gt[:, [1]] * col + gt[:, [2]] * row
        y = gt[:, [3]] + gt[:, [4]] * col + gt[:, [5]] * row
        rings = np.stack([x, y], axis=-1)
        polygons = shapely.polygons(np.concatenate([rings, rings[:, :1]], 1))
        # counter-clockwise, as samples_from_rasters stores them (extensions._geo)
        out[where] = shapely.to_wkb(shapely.orient_polygons(polygons))
    return pa.array(out, type=pa.binary())


def _footprints(state: QueryState, level: int, table: pa.Table) -> np.ndarray:
    """EPSG:4326 shapely footprint of each row (None where the metadata gives none)."""
    names = table.column_names
    out = np.full(table.num_rows, None, dtype=object)
    if ISTAC_GEOMETRY in names:
        out = footprints_for_rows(table, ISTAC_GEOMETRY, state, level)
    missing = np.flatnonzero(~_present(out))
    if missing.size and all(n in names for n in (STAC_CRS, STAC_GEOTRANSFORM, STAC_TENSOR_SHAPE)):
        rows = table.take(missing)
        outlines = pa.table({"stac:outline": _raster_outlines(rows), STAC_CRS: rows[STAC_CRS]})
        where = f"{state.path} level {level}"
        out[missing] = compute_footprints(outlines, "stac:outline", where=where).geometries
        missing = np.flatnonzero(~_present(out))
    if missing.size and STAC_CENTROID in names:
        out[missing] = footprints_for_rows(table.take(missing), STAC_CENTROID, state, level)
    return out


def _add_geometry(items: list[dict[str, Any]], geometries: np.ndarray, wkb: bool) -> None:
    """Set each Item's ``geometry`` (GeoJSON, or WKB) and ``bbox``, a batch at a time.

    A footprint cut at the antimeridian gets a bbox with ``west > east``.
    """
    present = np.flatnonzero(_present(geometries))
    if not present.size:
        return
    shapes = geometries[present]
    bounds = shapely.bounds(shapes)
    if wkb:
        encoded: list[Any] = list(shapely.to_wkb(shapes, flavor="iso"))
    else:
        encoded = json.loads("[" + ",".join(shapely.to_geojson(shapes)) + "]")
    for k, (row, box) in enumerate(zip(present.tolist(), bounds.tolist(), strict=True)):
        west, south, east, north = box
        if west == -180.0 and east == 180.0:
            west, east = _antimeridian_span(shapes[k], west, east)
        items[row]["geometry"] = encoded[k]
        items[row]["bbox"] = [west, south, east, north]


def _present(values: np.ndarray) -> np.ndarray:
    """True where ``values`` holds a geometry."""
    return np.fromiter((v is not None for v in values), dtype=bool, count=len(values))


def _antimeridian_span(geometry: Any, west: float, east: float) -> tuple[float, float]:
    parts = getattr(geometry, "geoms", ())
    eastern = [p.bounds[0] for p in parts if p.bounds[2] == 180.0]
    western = [p.bounds[2] for p in parts if p.bounds[0] == -180.0]
    if len(parts) > 1 and eastern and western:
        return min(eastern), max(western)
    return west, east


def _property_dicts(table: pa.Table) -> list[dict[str, Any]]:
    """Each row's scalar metadata (times and dates as ISO text), null values left out."""
    columns: dict[str, list[Any]] = {}
    for name, kind in zip(table.column_names, table.schema.types, strict=True):
        if name in _NOT_PROPERTIES or name.startswith(("internal:", "stac:", "istac:")):
            continue
        if pa.types.is_timestamp(kind):
            columns[name] = _iso(table.column(name))
        elif pa.types.is_date(kind):
            columns[name] = table.column(name).cast(pa.string()).to_pylist()
        elif any(check(kind) for check in _PROPERTY_TYPES):
            columns[name] = table.column(name).to_pylist()
    names = list(columns)
    rows = [dict(zip(names, values, strict=True)) for values in zip(*columns.values(), strict=True)]
    if not names:
        return [{} for _ in range(table.num_rows)]
    for name in (n for n in names if table.column(n).null_count):
        for row in rows:
            if row[name] is None:
                del row[name]
    return rows


class _Level:
    """One level's rows as Python values, row by row, for building Items and assets."""

    def __init__(self, state: QueryState, level: int, table: pa.Table, href: Href) -> None:
        self.table, self.href, self.path = table, href, state.path
        names = table.column_names
        self.ids = table.column(ID).to_pylist()
        self.types = table.column(TYPE).to_pylist()
        self.paths = table.column(GDAL_VSI).to_pylist()
        self.sizes = table.column(SIZE).to_pylist() if SIZE in names else [None] * len(self.ids)
        relative = table.column(RELATIVE_PATH).to_pylist() if RELATIVE_PATH in names else None
        self.item_ids = (
            [r.rstrip("/") if r else i for r, i in zip(relative, self.ids, strict=True)]
            if level and relative
            else self.ids
        )
        self.positions = table.column(CURRENT_ID).to_numpy()
        self.parents = table.column(PARENT_ID).to_numpy() if PARENT_ID in names else None
        self.checksums = table.column(CHECKSUM).to_pylist() if CHECKSUM in names else None
        rows = table.num_rows
        self.starts = _iso(_first(table, _STARTS), rows)
        self.ends = _iso(_first(table, _ENDS), rows)
        self.geoms = _footprints(state, level, table)
        self.crs = table.column(STAC_CRS).to_pylist() if STAC_CRS in names else None
        grid = STAC_GEOTRANSFORM in names and STAC_TENSOR_SHAPE in names
        self.gts = table.column(STAC_GEOTRANSFORM).to_pylist() if grid else None
        self.shapes = table.column(STAC_TENSOR_SHAPE).to_pylist() if grid else None
        self.props = _property_dicts(table)
        from pystac.extensions import file, projection

        self.extensions = (file, projection)

    def properties(self, i: int) -> dict[str, Any]:
        return self.props[i]

    def folder(
        self, parent: int, crs_codes: dict[str, dict[str, str]], where: str
    ) -> tuple[dict[str, Any], Any, tuple[str | None, str | None]]:
        """Assets of the FILE children of row position ``parent`` (rows sorted by parent),
        the union of their footprints and their time span."""
        if self.parents is None:
            return {}, None, (None, None)
        lo, hi = np.searchsorted(self.parents, [parent, parent + 1])
        assets = {}
        for k in range(lo, hi):  # each child's own time, as common metadata of its asset
            asset = self.asset(k, crs_codes)
            if self.starts[k]:
                asset.update(_time_fields(self.starts[k], self.ends[k], where))
            assets[self.ids[k]] = asset
        parts = [g for g in self.geoms[lo:hi] if g is not None]
        starts = [t for t in self.starts[lo:hi] if t]
        ends = [t for t in self.ends[lo:hi] if t] + starts
        span = (min(starts), max(ends)) if starts else (None, None)
        return assets, shapely.union_all(parts) if parts else None, span

    def asset(self, i: int, crs_codes: dict[str, dict[str, str]]) -> dict[str, Any]:
        file, projection = self.extensions
        path = self.paths[i]
        asset: dict[str, Any] = {"href": path, "roles": ["data"]}
        if self.href == "url":
            asset.update(_url_of(path))
        size = self.sizes[i]
        if size is not None:
            asset[file.SIZE_PROP] = int(size)
        digest = to_multihash(self.checksums[i]) if self.checksums is not None else None
        if digest is not None:
            asset[file.CHECKSUM_PROP] = digest
        crs = self.crs[i] if self.crs is not None else None
        if crs:
            if crs not in crs_codes:
                crs_codes[crs] = _proj_crs(crs)
            asset.update(crs_codes[crs])
        if self.gts is not None and self.shapes is not None and self.gts[i] and self.shapes[i]:
            asset[projection.SHAPE_PROP] = [int(v) for v in self.shapes[i][-2:]]
            asset[projection.TRANSFORM_PROP] = proj_transform_of(self.gts[i])
        return asset


def _proj_crs(crs: str) -> dict[str, str]:
    """``proj:code`` when the CRS has an EPSG code, else ``proj:wkt2``."""
    from pyproj import CRS
    from pystac.extensions import projection

    text = crs.strip()
    if text.upper().startswith("EPSG:") and text[5:].isdigit():
        return {projection.CODE_PROP: text.upper()}
    parsed = CRS.from_user_input(text)
    epsg = parsed.to_epsg()
    if epsg is not None:
        return {projection.CODE_PROP: f"EPSG:{epsg}"}
    return {projection.WKT2_PROP: parsed.to_wkt()}


def _url_of(path: str) -> dict[str, Any]:
    """The container URL of a GDAL path and, for a member, its byte range (archive extension)."""
    extra: dict[str, Any] = {}
    if path.startswith(SUBFILE_PREFIX):
        sub = parse_subfile(path)
        path = sub.container
        extra = {ARCHIVE_FORMAT: "application/zip", ARCHIVE_START: sub.offset,
                 ARCHIVE_END: sub.offset + sub.size - 1}  # fmt: skip
    for prefix, scheme in (("/vsicurl/", ""), ("/vsis3/", "s3://"), ("/vsigs/", "gs://")):
        if path.startswith(prefix):
            path = scheme + path[len(prefix) :]
            break
    return {"href": path, **extra}


def _time_fields(start: str | None, end: str | None, where: str) -> dict[str, Any]:
    if start is None:
        raise TacoValidationError(
            f"to_stac: a STAC Item needs a time; expected stac:time_start or istac:time_start "
            f"on {where} (or on its children), found none"
        )
    if end is None or end == start:
        return {"datetime": start}
    return {"datetime": None, "start_datetime": start, "end_datetime": end}


def item_batches(
    state: QueryState,
    level: int = 0,
    href: Href = "gdal",
    batch: int = BATCH,
    wkb: bool = False,
) -> Iterator[list[dict[str, Any]]]:
    """STAC Item dicts of the current view at ``level``, ``batch`` samples at a time.

    With ``wkb``, ``geometry`` is ISO WKB instead of GeoJSON: what stac-geoparquet
    stores, so that the Parquet writer needs no GeoJSON round trip.

    Raises:
        TacoValidationError: a sample (or all its children) has no time.
        TacoQueryError: ``level`` is out of range, or the view dropped ``internal:current_id``.

    Example:
        >>> batch = next(item_batches(tiles.state, level=0))
        >>> batch[0]["id"], sorted(batch[0]["assets"]), batch[0]["properties"]["datetime"]
        ('tile000', ['b02', 'b03', 'b04'], '2024-03-01T10:30:00Z')
    """
    pystac = require_stac("to_stac()")
    from pystac.extensions.file import FileExtension
    from pystac.extensions.projection import ProjectionExtension

    if href not in ("gdal", "url"):
        raise TacoValidationError(f"to_stac: href must be one of 'gdal', 'url', found {href!r}")
    extensions = [ProjectionExtension.get_schema_uri(), FileExtension.get_schema_uri()]
    extensions += [ARCHIVE_SCHEMA] if href == "url" else []
    children = Children(state, level + 1, batch, "to_stac()") if level < state.max_depth else None
    crs_codes: dict[str, dict[str, str]] = {}
    collection = {"collection": state.collection["id"]} if state.collection.get("id") else {}
    version = pystac.get_stac_version()
    try:
        for table in level_batches(state, level, batch, "to_stac()"):
            rows = _Level(state, level, table, href)
            kids = None
            if children is not None and FOLDER in rows.types:
                folders = rows.positions[np.asarray(rows.types, dtype=object) == FOLDER]
                found = children.of(np.asarray(folders, dtype=np.int64))
                kids = _Level(state, level + 1, found, href) if found.num_rows else None
            items = []
            geometries = np.array(rows.geoms, dtype=object)
            for i, item_id in enumerate(rows.item_ids):
                where = f"sample {item_id!r} of {rows.path}"
                geometry, start, end = rows.geoms[i], rows.starts[i], rows.ends[i]
                if rows.types[i] != FOLDER:
                    assets = {"data": rows.asset(i, crs_codes)}
                elif kids is None:
                    assets = {}
                else:
                    assets, union, (first_start, last_end) = kids.folder(
                        rows.positions[i], crs_codes, where
                    )
                    geometry = union if geometry is None else geometry
                    geometries[i] = geometry
                    start, end = (first_start, last_end) if start is None else (start, end)
                properties = rows.properties(i)
                properties.update(_time_fields(start, end, where))
                feature: dict[str, Any] = {
                    "type": "Feature",
                    "stac_version": version,
                    "stac_extensions": extensions,
                    "id": item_id,
                    "geometry": None,
                    "properties": properties,
                    "links": [],
                    "assets": assets,
                    **collection,
                }
                items.append(feature)
            _add_geometry(items, geometries, wkb)
            yield items
    finally:
        if children is not None:
            children.close()


def to_item_collection(state: QueryState, level: int = 0, href: Href = "gdal") -> Any:
    """The current view as a ``pystac.ItemCollection`` (see :func:`item_batches`).

    Example:
        >>> len(to_item_collection(ds.state))
        4
    """
    pystac = require_stac("to_stac()")
    items = [pystac.Item.from_dict(d, preserve_dict=False) for b in item_batches(state, level, href)
             for d in b]  # fmt: skip
    return pystac.ItemCollection(items)


def stac_collection(state: QueryState) -> Any:
    """A ``pystac.Collection`` from COLLECTION.json: id, description, license, providers, extent.

    Example:
        >>> stac_collection(ds.state).extent.spatial.bboxes == [ds.extent["spatial"]]
        True
    """
    pystac = require_stac("to_stac_collection()")
    c = state.collection
    extent = c.get("extent") or {}
    spatial = extent.get("spatial") or [-180.0, -90.0, 180.0, 90.0]
    times = [
        datetime.fromisoformat(t.replace("Z", "+00:00")).astimezone(UTC) if t else None
        for t in (extent.get("temporal") or [None, None])
    ]
    licenses = list(c.get("licenses") or [])
    providers = [
        pystac.Provider(name=p["name"], roles=p.get("roles"), url=p.get("url"))
        for p in c.get("providers") or []
        if isinstance(p, dict) and p.get("name")
    ]
    return pystac.Collection(
        id=str(c.get("id") or "taco"), description=str(c.get("description") or ""),
        title=c.get("title"), license=licenses[0] if len(licenses) == 1 else "other",
        keywords=list(c.get("keywords") or []) or None, providers=providers or None,
        extent=pystac.Extent(pystac.SpatialExtent([list(spatial)]),
                             pystac.TemporalExtent([times])),
    )  # fmt: skip
