"""Footprint index of a dataset: one EPSG:4326 feature per FILE sample, for QGIS and GDAL.

Each feature's ``location`` is the sample's GDAL path (what QGIS and GDAL's GTI
driver open). The footprint is the first of ``istac:geometry``, the STAC grid
outline, the centroid and the nearest ancestor's footprint. VRT mosaics are
built per (role, CRS) group, so bands of different meaning are never stacked.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from xml.sax.saxutils import escape as _xml

import numpy as np
import pyarrow as pa
import shapely

from taco_gdal.errors import TacoFormatError, TacoIOError, TacoValidationError
from taco_gdal.format.names import (
    CURRENT_ID,
    FILE,
    GDAL_VSI,
    ID,
    INTERNAL_PREFIX,
    ISTAC_CENTROID,
    ISTAC_CRS,
    ISTAC_GEOMETRY,
    PARENT_ID,
    PROTECTED_COLUMNS,
    STAC_CENTROID,
    STAC_CRS,
    STAC_GEOTRANSFORM,
    STAC_TENSOR_SHAPE,
    TIME_START_COLUMNS,
    TYPE,
)
from taco_gdal.read.frames.vector import is_plain_type, vector_value
from taco_gdal.write._atomic import check_target

if TYPE_CHECKING:
    import geopandas as gpd

    from taco_gdal.read.dataset import TacoDataset

__all__ = [
    "GTI_MIN_VERSION",
    "IndexResult",
    "footprints",
    "gti_xml",
    "index",
    "level_footprints",
    "mosaic",
    "probe_missing",
]

log = logging.getLogger(__name__)

INDEX_CRS: Final = "EPSG:4326"
GTI_MIN_VERSION: Final = 3_09_00_00
"""``int(gdal.VersionInfo())`` from which the GTI driver exists (GDAL 3.9)."""
_DRIVERS: Final = {".gpkg": "GPKG", ".fgb": "FlatGeobuf", ".geojson": "GeoJSON"}
_PARQUET: Final = (".parquet", ".geoparquet")
_OWN_FIELDS: Final = ("location", "key", "id", "level", "parent", "role", "crs", "time_start")
_DENSIFY: Final = 16
"""Points per edge when an outline is reprojected."""


@dataclass(frozen=True)
class IndexResult:
    """What :func:`index` wrote: the layer's path, name and feature count, VRTs and GTI files."""

    path: Path
    layer: str
    features: int
    vrts: list[Path] = field(default_factory=list)
    gti: list[Path] = field(default_factory=list)


def _to_lonlat(geometries: np.ndarray, crs: str, where: str) -> np.ndarray:
    from pyproj import CRS, Transformer
    from pyproj.exceptions import CRSError

    try:
        source = CRS.from_user_input(crs)
    except CRSError as exc:
        raise TacoFormatError(f"{where}: expected a CRS that PROJ knows, found {crs!r}") from exc
    if source.equals(CRS.from_user_input(INDEX_CRS)):
        return geometries
    transformer = Transformer.from_crs(source, INDEX_CRS, always_xy=True)

    def project(xy: np.ndarray) -> np.ndarray:
        x, y = transformer.transform(xy[:, 0], xy[:, 1])
        return np.column_stack([x, y])

    lengths = shapely.length(geometries)
    dense = shapely.segmentize(geometries, np.where(lengths > 0, lengths / (4 * _DENSIFY), 1.0))
    return np.asarray(shapely.transform(dense, project))


def _grid_outlines(table: pa.Table) -> np.ndarray:
    """Polygons of the raster grids (source CRS) from geotransform and tensor shape."""
    outlines = np.full(table.num_rows, None, dtype=object)
    transforms = table.column(STAC_GEOTRANSFORM).to_pylist()
    shapes = table.column(STAC_TENSOR_SHAPE).to_pylist()
    for i, (gt, shape) in enumerate(zip(transforms, shapes, strict=True)):
        if not gt or not shape or len(gt) != 6 or len(shape) < 2:
            continue
        rows, cols = shape[-2], shape[-1]
        corners = [(0, 0), (cols, 0), (cols, rows), (0, rows)]
        outlines[i] = shapely.Polygon(
            [(gt[0] + c * gt[1] + r * gt[2], gt[3] + c * gt[4] + r * gt[5]) for c, r in corners]
        )
    return outlines


def _in_crs(geometries: np.ndarray, crss: Sequence[Any], where: str) -> np.ndarray:
    """Reproject each geometry from its row's CRS (rows without either stay None)."""
    out = np.full(len(geometries), None, dtype=object)
    keys = np.array([c if isinstance(c, str) and c else "" for c in crss], dtype=object)
    for crs in sorted(set(keys) - {""}):
        rows = np.flatnonzero((keys == crs) & (geometries != None))  # noqa: E711
        if rows.size:
            out[rows] = _to_lonlat(geometries[rows], str(crs), f"{where} ({crs})")
    return out


def _wkb(table: pa.Table, column: str, where: str) -> np.ndarray:
    values = np.asarray(table.column(column).to_pylist(), dtype=object)
    try:
        return np.asarray(shapely.from_wkb(values, on_invalid="raise"), dtype=object)
    except shapely.errors.GEOSException as exc:
        raise TacoFormatError(f"{where}: column {column!r} holds invalid WKB: {exc}") from exc


def _first(candidates: list[np.ndarray], n: int) -> np.ndarray:
    out = np.full(n, None, dtype=object)
    for values in candidates:
        empty = np.array([g is None for g in out], dtype=bool)
        out[empty] = values[empty]
    return out


def level_footprints(table: pa.Table, where: str) -> np.ndarray:
    """EPSG:4326 footprint of every row of a level table (None where there is none).

    Example:
        >>> level_footprints(ds.to_arrow(0), "level0")[0]
        <POLYGON ((-3.7 40.4, -3.684 40.4, -3.684 40.384, -3.7 40.384, -3.7 40.4))>
    """
    names = table.column_names
    candidates: list[np.ndarray] = []
    if ISTAC_GEOMETRY in names and ISTAC_CRS in names:
        geometries = _wkb(table, ISTAC_GEOMETRY, where)
        candidates.append(_in_crs(geometries, table.column(ISTAC_CRS).to_pylist(), where))
    if {STAC_GEOTRANSFORM, STAC_TENSOR_SHAPE, STAC_CRS} <= set(names):
        outlines = _grid_outlines(table)
        candidates.append(_in_crs(outlines, table.column(STAC_CRS).to_pylist(), where))
    for column in (STAC_CENTROID, ISTAC_CENTROID):
        if column in names:
            candidates.append(_wkb(table, column, where))
    return _first(candidates, table.num_rows)


def _metadata_columns(table: pa.Table) -> list[str]:
    return [
        f.name
        for f in table.schema
        if f.name not in PROTECTED_COLUMNS
        and not f.name.startswith(INTERNAL_PREFIX)
        and f.name not in _OWN_FIELDS
        and not f.name.startswith("__")
    ]


def _sample_crs(table: pa.Table) -> list[str | None]:
    values: list[str | None] = [None] * table.num_rows
    for column in (ISTAC_CRS, STAC_CRS):
        if column in table.column_names:
            values = [
                v or str(c) if c else v
                for v, c in zip(values, table.column(column).to_pylist(), strict=True)
            ]
    return values


def _time_start(table: pa.Table) -> pa.Array | None:
    for column in TIME_START_COLUMNS:
        if column in table.column_names:
            return table.column(column).combine_chunks()
    return None


@dataclass
class _Level:
    keys: dict[int, str]
    geometry: dict[int, Any]


def _level_rows(
    ds: TacoDataset, level: int, previous: _Level | None
) -> tuple[pa.Table | None, _Level]:
    table = ds.to_arrow(level)
    where = f"level{level} of {ds.path}"
    ids = [str(v) for v in table.column(ID).to_pylist()]
    current = table.column(CURRENT_ID).to_pylist()
    if previous is None:
        parents: list[str | None] = [None] * table.num_rows
        inherited: list[Any] = [None] * table.num_rows
    else:
        up = table.column(PARENT_ID).to_pylist()
        parents = [previous.keys.get(int(p)) if p is not None else None for p in up]
        inherited = [previous.geometry.get(int(p)) if p is not None else None for p in up]
    keys = [i if p is None else f"{p}/{i}" for i, p in zip(ids, parents, strict=True)]
    own = level_footprints(table, where)
    geometry = [g if g is not None else h for g, h in zip(own, inherited, strict=True)]
    state = _Level(
        keys=dict(zip((int(c) for c in current), keys, strict=True)),
        geometry=dict(zip((int(c) for c in current), geometry, strict=True)),
    )
    files = np.flatnonzero(np.asarray(table.column(TYPE).to_pylist(), dtype=object) == FILE)
    if files.size == 0:
        return None, state
    picked = table.take(pa.array(files))
    columns: dict[str, Any] = {
        "location": picked.column(GDAL_VSI),
        "key": pa.array([keys[i] for i in files], pa.string()),
        "id": picked.column(ID).cast(pa.string()),
        "level": pa.array([level] * files.size, pa.int32()),
        "parent": pa.array([parents[i] for i in files], pa.string()),
        "role": pa.array([keys[i].partition("/")[2] for i in files], pa.string()),
        "crs": pa.array(_sample_crs(picked), pa.string()),
    }
    time = _time_start(picked)
    if time is not None:
        columns["time_start"] = time
    for name in _metadata_columns(picked):
        column = picked.column(name)
        if not is_plain_type(column.type):  # WKB as WKT, lists as JSON: what OGR formats hold
            column = pa.array([vector_value(v) for v in column.to_pylist()], pa.string())
        columns[name] = column
    attributes = pa.table(columns)
    wkb = shapely.to_wkb(np.asarray([geometry[i] for i in files], dtype=object))
    return attributes.append_column("geometry", pa.array(list(wkb), pa.binary())), state


def _raster_outline(location: str) -> tuple[Any, str] | None:
    """Grid outline (source CRS) and CRS of a raster GDAL opens; None if it is not one."""
    from osgeo import gdal

    gdal.PushErrorHandler("CPLQuietErrorHandler")
    try:
        dataset = gdal.Open(location)
    except RuntimeError:  # raised instead of returning None under UseExceptions()
        dataset = None
    finally:
        gdal.PopErrorHandler()
    if dataset is None:
        return None
    srs = dataset.GetSpatialRef()
    gt = dataset.GetGeoTransform(can_return_null=True)
    if srs is None or gt is None:
        return None
    cols, rows = dataset.RasterXSize, dataset.RasterYSize
    corners = [(0, 0), (cols, 0), (cols, rows), (0, rows)]
    outline = shapely.Polygon(
        [(gt[0] + c * gt[1] + r * gt[2], gt[3] + c * gt[4] + r * gt[5]) for c, r in corners]
    )
    name, code = srs.GetAuthorityName(None), srs.GetAuthorityCode(None)
    return outline, f"{name}:{code}" if name and code else srs.ExportToWkt()


def probe_missing(frame: gpd.GeoDataFrame, where: str) -> int:
    """Fill the footprint and CRS of rows without one by opening their rasters with GDAL.

    One open (remote: one or more requests) per such sample, which is why
    :func:`index` does it only when asked. Returns how many footprints were filled.

    Example:
        >>> probe_missing(footprints(taco_gdal.load("tiles.caf")), "tiles.caf")
        3
    """
    filled = 0
    for position in np.flatnonzero(frame.geometry.isna().to_numpy()):
        found = _raster_outline(str(frame["location"].iloc[position]))
        if found is None:
            continue
        outline, crs = found
        lonlat = _to_lonlat(np.asarray([outline], dtype=object), crs, f"{where} (GDAL probe)")[0]
        frame.iloc[position, frame.columns.get_loc(frame.geometry.name)] = lonlat
        current = frame["crs"].iloc[position]
        if not isinstance(current, str) or not current:
            frame.iloc[position, frame.columns.get_loc("crs")] = crs
        filled += 1
    return filled


def footprints(ds: TacoDataset, *, probe: bool = False) -> gpd.GeoDataFrame:
    """One row per FILE sample of ``ds`` (all levels, filters applied), EPSG:4326.

    Args:
        ds: a loaded dataset, possibly filtered.
        probe: open rasters whose metadata give no footprint (:func:`probe_missing`).

    Example:
        >>> footprints(taco_gdal.load("tiles.tacozip")).location.iloc[0]
        '/vsisubfile/203_622,.../tiles.tacozip'
    """
    import geopandas as gpd

    tables: list[pa.Table] = []
    previous: _Level | None = None
    for level in range(ds.max_depth + 1):
        table, previous = _level_rows(ds, level, previous)
        if table is not None:
            tables.append(table)
    if not tables:
        raise TacoValidationError(f"{ds.path}: expected FILE samples to index, found none")
    merged = pa.concat_tables(tables, promote_options="permissive")
    frame = merged.drop_columns(["geometry"]).to_pandas()
    geometry = shapely.from_wkb(np.asarray(merged.column("geometry").to_pylist(), dtype=object))
    result = gpd.GeoDataFrame(frame, geometry=geometry, crs=INDEX_CRS)
    if probe:
        probe_missing(result, ds.path)
    return result


def _layer_name(ds: TacoDataset, out: Path) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "_", ds.id or out.stem).strip("_") or "footprints"


def _write_layer(frame: gpd.GeoDataFrame, out: Path, layer: str) -> None:
    suffix = out.suffix.lower()
    temp = out.with_name(f".{out.stem}.{os.getpid()}.tmp{out.suffix}")
    try:
        if suffix in _PARQUET:
            frame.to_parquet(temp, index=False)
        elif suffix in _DRIVERS:
            import pyogrio

            pyogrio.write_dataframe(frame, temp, layer=layer, driver=_DRIVERS[suffix])
        else:
            raise TacoValidationError(
                f"{out}: expected an index file ending in "
                f"{', '.join((*_DRIVERS, *_PARQUET))}, found {out.suffix or 'no suffix'!r}"
            )
        os.replace(temp, out)
    except (OSError, RuntimeError) as exc:
        raise TacoIOError(f"{out}: writing the footprint layer failed: {exc}") from exc
    finally:
        if temp.exists():
            temp.unlink()


def index(
    ds: TacoDataset,
    out: str | os.PathLike[str],
    *,
    layer: str | None = None,
    overwrite: bool = False,
    vrt_dir: str | os.PathLike[str] | None = None,
    probe: bool = False,
) -> IndexResult:
    """Write the footprint layer of ``ds`` (and, with ``vrt_dir``, its VRT mosaics).

    Args:
        ds: a loaded dataset, possibly filtered (only its current samples are indexed).
        out: ``.gpkg``, ``.fgb``, ``.geojson``, or ``.parquet`` (GeoParquet).
        layer: layer name (default: the dataset id).
        vrt_dir: also write one VRT mosaic per (role, CRS) group there.
        probe: open the rasters whose metadata give no footprint.

    Raises:
        TacoExistsError: ``out`` exists and ``overwrite`` is False.
        TacoValidationError: an unknown suffix, or no FILE sample.
        TacoFormatError: a CRS PROJ does not know, invalid WKB.

    Example:
        >>> result = index(taco_gdal.load("tiles.tacozip"), "tiles.gpkg")
        >>> result.features
        9
    """
    target = Path(out).absolute()
    check_target(target, overwrite)
    frame = footprints(ds, probe=probe)
    name = layer or _layer_name(ds, target)
    _write_layer(frame, target, name)
    log.info("index: %d features -> %s", len(frame), target)
    result = IndexResult(path=target, layer=name, features=len(frame))
    if vrt_dir is not None:
        vrts, gti = mosaic(frame, vrt_dir, index_path=target, layer=name, overwrite=overwrite)
        result.vrts.extend(vrts)
        result.gti.extend(gti)
    return result


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_")


def _group_name(role: str, crs: str) -> str:
    return f"{_slug(role) or 'samples'}_{_slug(crs) or 'nocrs'}"


def _build_vrt(target: Path, locations: list[str]) -> None:
    from osgeo import gdal

    gdal.PushErrorHandler("CPLQuietErrorHandler")
    try:
        vrt = gdal.BuildVRT(str(target), locations)
    except RuntimeError as exc:  # raised instead of returning None under UseExceptions()
        raise TacoIOError(f"{target}: gdal.BuildVRT over {len(locations)} samples: {exc}") from exc
    finally:
        gdal.PopErrorHandler()
    if vrt is None:
        raise TacoIOError(
            f"{target}: gdal.BuildVRT over {len(locations)} samples (first: {locations[0]}) "
            f"failed: {gdal.GetLastErrorMsg()}"
        )
    vrt.FlushCache()
    del vrt


def gti_xml(index_path: Path, layer: str, role: str, crs: str) -> str:
    """A GTI (GDAL >= 3.9) description of one (role, CRS) group of an index.

    Example:
        >>> print(gti_xml(Path("/d/i.gpkg"), "d", "B04", "EPSG:32630"))  # doctest: +ELLIPSIS
        <GDALTileIndexDataset>
          <IndexDataset>/d/i.gpkg</IndexDataset>
        ...
    """
    role_sql = "'" + role.replace("'", "''") + "'"
    crs_sql = "'" + crs.replace("'", "''") + "'"
    return "\n".join(
        [
            "<GDALTileIndexDataset>",
            f"  <IndexDataset>{_xml(str(index_path))}</IndexDataset>",
            f"  <IndexLayer>{_xml(layer)}</IndexLayer>",
            "  <LocationField>location</LocationField>",
            f"  <Filter>{_xml(f'role = {role_sql} AND crs = {crs_sql}')}</Filter>",
            f"  <SRS>{_xml(crs)}</SRS>",
            "</GDALTileIndexDataset>",
            "",
        ]
    )


def mosaic(
    frame: gpd.GeoDataFrame,
    out_dir: str | os.PathLike[str],
    *,
    index_path: Path | None = None,
    layer: str = "footprints",
    overwrite: bool = False,
) -> tuple[list[Path], list[Path]]:
    """One VRT per (role, CRS) group of a footprint frame; GTI files when GDAL >= 3.9.

    Samples without a CRS are grouped under ``nocrs`` (``gdal.BuildVRT`` reads their
    georeferencing). GTI files are written only with ``index_path`` and a GDAL that
    has the GTI driver. Returns ``(vrt paths, gti paths)``.

    Example:
        >>> vrts, gtis = mosaic(footprints(tiles), "mosaics")
        >>> [vrt.name for vrt in vrts], gtis
        (['b02_EPSG_4326.vrt', 'b03_EPSG_4326.vrt', 'b04_EPSG_4326.vrt'], [])
    """
    from osgeo import gdal

    folder = Path(out_dir).absolute()
    folder.mkdir(parents=True, exist_ok=True)
    crs = frame["crs"].fillna("").astype(str)
    groups = frame.assign(_crs=crs).groupby(["role", "_crs"], sort=True)
    with_gti = index_path is not None and int(gdal.VersionInfo()) >= GTI_MIN_VERSION
    vrts: list[Path] = []
    gtis: list[Path] = []
    for (role, group_crs), rows in groups:
        name = _group_name(str(role), str(group_crs))
        target = folder / f"{name}.vrt"
        check_target(target, overwrite)
        _build_vrt(target, [str(v) for v in rows["location"]])
        vrts.append(target)
        if with_gti and index_path is not None and group_crs:
            gti = folder / f"{name}.gti"
            check_target(gti, overwrite)
            gti.write_text(gti_xml(index_path, layer, str(role), str(group_crs)), "utf-8")
            gtis.append(gti)
    return vrts, gtis
