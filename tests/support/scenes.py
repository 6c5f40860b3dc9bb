"""Mixed-CRS GeoTIFFs for the analyst tests: UTM 30N, UTM 31N, EPSG:4326, the antimeridian.

Every raster is 8x8 uint8 (a few hundred bytes) and carries its acquisition
time in a tag (``TIFFTAG_DATETIME`` or an ``IMD`` ``ACQUISITIONDATETIME``), so
``ISTAC.from_raster`` / ``STAC.from_raster`` read it from the file.  The
ground truth of a spatial filter is computed here independently of taco_gdal:
each outline is densified to 200 points per edge and reprojected with pyproj.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import rasterio
import shapely
from pyproj import Transformer
from rasterio.transform import from_origin

PIXELS = 8
START = datetime(2024, 1, 10, 10, 30)


@dataclass(frozen=True)
class Scene:
    """One raster: its stem, CRS, north-west corner and pixel size (CRS units)."""

    stem: str
    crs: str
    west: float
    north: float
    pixel: float
    time: datetime
    tag: str  # "tiff" (TIFFTAG_DATETIME) or "imd" (IMD ACQUISITIONDATETIME)


def _scenes() -> list[Scene]:
    out: list[Scene] = []
    day = timedelta(days=17)
    for i in range(6):  # UTM 30N, 20 km tiles west-east across central Spain (~ -4.2 .. -2.4)
        out.append(
            Scene(
                f"utm30_{i}",
                "EPSG:32630",
                400_000 + 25_000 * i,
                4_480_000,
                2_500,
                START + i * day,
                "tiff",
            )
        )
    for i in range(5):  # UTM 31N near Barcelona (~ 1.6 .. 2.9)
        out.append(
            Scene(
                f"utm31_{i}",
                "EPSG:32631",
                380_000 + 22_000 * i,
                4_600_000,
                2_500,
                START + (i + 6) * day,
                "imd",
            )
        )
    for i in range(5):  # EPSG:4326, 0.2 degree tiles (-4.0 .. -1.8)
        out.append(
            Scene(
                f"geo_{i}",
                "EPSG:4326",
                -4.0 + 0.5 * i,
                41.0 + 0.1 * i,
                0.025,
                START + (i + 11) * day,
                "tiff",
            )
        )
    # UTM 60S near Fiji: ~ 179.7 E .. 179.6 W, crosses the antimeridian
    out.append(
        Scene("fiji_utm60", "EPSG:32760", 790_000, 8_160_000, 7_500, START + 16 * day, "imd")
    )
    out.append(Scene("fiji_geo_east", "EPSG:4326", 179.0, -16.5, 0.05, START + 17 * day, "tiff"))
    out.append(Scene("fiji_geo_west", "EPSG:4326", -179.6, -16.5, 0.05, START + 18 * day, "tiff"))
    return out


SCENES: tuple[Scene, ...] = tuple(_scenes())


def write_scene(folder: Path, scene: Scene, index: int = 0) -> Path:
    """Write ``scene`` as ``folder/<stem>.tif`` with its time tag; return the path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{scene.stem}.tif"
    profile = {
        "driver": "GTiff",
        "width": PIXELS,
        "height": PIXELS,
        "count": 1,
        "dtype": "uint8",
        "crs": scene.crs,
        "transform": from_origin(scene.west, scene.north, scene.pixel, scene.pixel),
    }
    rng = np.random.default_rng(index)
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(rng.integers(1, 255, size=(1, PIXELS, PIXELS), dtype=np.uint8))
        if scene.tag == "tiff":
            dst.update_tags(TIFFTAG_DATETIME=scene.time.strftime("%Y:%m:%d %H:%M:%S"))
        else:
            dst.update_tags(ns="IMD", ACQUISITIONDATETIME=scene.time.isoformat() + "Z")
    return path


def write_scenes(folder: Path, scenes: tuple[Scene, ...] = SCENES) -> list[Path]:
    """Write every scene into ``folder``."""
    return [write_scene(folder, scene, i) for i, scene in enumerate(scenes)]


def truth_footprint(scene: Scene) -> shapely.Geometry:
    """The scene's outline in EPSG:4326, densified finely; split in two at the antimeridian."""
    size = PIXELS * scene.pixel
    xs = np.linspace(scene.west, scene.west + size, 201)
    ys = np.linspace(scene.north, scene.north - size, 201)
    ring_x = np.concatenate([xs, np.full(201, xs[-1]), xs[::-1], np.full(201, xs[0])])
    ring_y = np.concatenate([np.full(201, ys[0]), ys, np.full(201, ys[-1]), ys[::-1]])
    lon, lat = Transformer.from_crs(scene.crs, "EPSG:4326", always_xy=True).transform(
        ring_x, ring_y
    )
    lon = np.asarray(lon)
    if lon.max() - lon.min() > 180:  # crosses: unwrap to 0..360, then cut at 180
        lon = np.where(lon < 0, lon + 360, lon)
        whole = shapely.Polygon(np.column_stack([lon, lat]))
        east = whole.intersection(shapely.box(0, -90, 180, 90))
        west = shapely.affinity.translate(whole.intersection(shapely.box(180, -90, 360, 90)), -360)
        return shapely.union(east, west)
    return shapely.Polygon(np.column_stack([lon, lat]))


def truth_ids(geometry_4326: shapely.Geometry, scenes: tuple[Scene, ...] = SCENES) -> set[str]:
    """Stems of the scenes whose 4326 outline intersects ``geometry_4326``."""
    return {s.stem for s in scenes if truth_footprint(s).intersects(geometry_4326)}
