"""A dataset with a hand-made leaky split: planted overlaps, near misses, a duplicated sample.

Footprints are ISTAC boxes laid out in metres in each sample's own CRS (UTM 30N,
EPSG:4326, UTM 60N / 1N across the antimeridian at 70N, polar stereographic at
85N), so every planted gap is known in metres. ``LEAKS`` says which pairs leak
at which buffer; ``DUPLICATE`` names the two samples written from one file.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyproj
import shapely

from taco_gdal.extensions import ISTAC
from taco_gdal.model import Sample, Taco, Tortilla
from tests.support.datasets import make_geotiff

Y0 = 4_400_000.0
KM = 1000.0


def _utm_box(x: float, y: float, side: float = KM) -> shapely.Polygon:
    return shapely.box(x, y, x + side, y + side)


def _centred(crs: str, lon: float, lat: float, half: float) -> tuple[float, float, float]:
    x, y = pyproj.Transformer.from_crs("EPSG:4326", crs, always_xy=True).transform(lon, lat)
    return x, y, half


def _layout() -> list[tuple[str, str, str, shapely.Geometry]]:
    """``(id, split, crs, geometry in crs)`` of every sample."""
    to_lonlat = pyproj.Transformer.from_crs("EPSG:32630", "EPSG:4326", always_xy=True)
    d_lonlat = shapely.transform(
        shapely.segmentize(_utm_box(511_050, Y0), 50),
        lambda xy: np.column_stack(to_lonlat.transform(xy[:, 0], xy[:, 1])),
    )
    mx, my, mh = _centred("EPSG:32660", 179.995, 70.0, 500.0)
    nx, ny, nh = _centred("EPSG:32601", -179.985, 70.0, 500.0)
    px, py, _ = _centred("EPSG:3413", -45.0, 85.0, 0.0)
    return [
        ("a", "train", "EPSG:32630", _utm_box(500_000, Y0)),
        ("b", "test", "EPSG:32630", _utm_box(500_500, Y0 + 500)),  # overlaps a
        ("c", "train", "EPSG:32630", _utm_box(510_000, Y0)),
        ("d", "validation", "EPSG:4326", d_lonlat),  # 50 m east of c
        ("e", "train", "EPSG:32630", _utm_box(520_000, Y0)),
        ("f", "test", "EPSG:32630", _utm_box(521_150, Y0)),  # 150 m east of e
        ("g", "train", "EPSG:32630", _utm_box(530_000, Y0)),
        ("h", "train", "EPSG:32630", _utm_box(530_500, Y0 + 500)),  # overlaps g, same split
        ("i", "test", "EPSG:32630", _utm_box(540_000, Y0)),
        ("j", "train", "EPSG:32630", _utm_box(541_000, Y0)),  # touches i
        ("k", "train", "EPSG:32630", _utm_box(560_000, Y0)),  # same bytes as l
        ("l", "test", "EPSG:32630", _utm_box(580_000, Y0)),
        # across the antimeridian at 70N: m (UTM 60N) crosses it and overlaps n (UTM 1N)
        ("m", "train", "EPSG:32660", shapely.box(mx - mh, my - mh, mx + mh, my + mh)),
        ("n", "test", "EPSG:32601", shapely.box(nx - nh, ny - nh, nx + nh, ny + nh)),
        (
            "o",
            "validation",
            "EPSG:32601",
            shapely.box(nx + nh + 60, ny - nh, nx + nh + 1060, ny + nh),
        ),
        # polar stereographic at 85N, where a grid metre is 0.97 ground metres:
        # q is 82 m from p, r 134 m from q
        ("p", "train", "EPSG:3413", _utm_box(px, py)),
        ("q", "test", "EPSG:3413", _utm_box(px + 1080, py)),
        ("r", "validation", "EPSG:3413", _utm_box(px + 2210, py)),
    ]


LEAKS: dict[float, set[frozenset[str]]] = {
    0.0: {frozenset("ab"), frozenset("mn")},
    100.0: {frozenset(p) for p in ("ab", "mn", "cd", "ij", "no", "pq")},
    200.0: {frozenset(p) for p in ("ab", "mn", "cd", "ij", "no", "pq", "ef", "qr")},
}
"""Buffer in metres -> the pairs in different splits that leak at that buffer."""

DUPLICATE = ("k", "l")
SPLITS = {sample_id: split for sample_id, split, _, _ in _layout()}


def leaky_taco(folder: Path, only: set[str] | None = None) -> tuple[Taco, dict[str, str]]:
    """The Taco (its samples limited to ``only`` if given) and each sample's digest."""
    folder.mkdir(parents=True, exist_ok=True)
    samples, digests = [], {}
    for index, (sample_id, split, crs, geometry) in enumerate(_layout()):
        if only is not None and sample_id not in only:
            continue
        source = folder / f"{'k' if sample_id in DUPLICATE else sample_id}.tif"
        if not source.exists():
            make_geotiff(source, index)
        digests[sample_id] = "sha256:" + hashlib.sha256(source.read_bytes()).hexdigest()
        time = datetime(2024, 1, 1 + index)
        sample = Sample(sample_id, source, split=split)
        sample.extend_with(ISTAC(crs, shapely.to_wkb(geometry), time))
        samples.append(sample)
    taco = Taco(
        Tortilla(samples),
        id="leaky",
        dataset_version="1.0.0",
        description="A split with planted leaks",
        licenses=["CC-BY-4.0"],
        providers=[{"name": "taco_gdal tests"}],
        tasks=["segmentation"],
    )
    return taco, digests


def write_leaky(folder: Path, only: set[str] | None = None) -> tuple[Path, dict[str, Any]]:
    """Write the leaky dataset (sha256 digests stored) as a TACO ZIP; return it and digests."""
    from taco_gdal.write import create

    taco, digests = leaky_taco(folder / "src", only)
    out = create(taco, folder / "leaky.tacozip", quiet=True, checksum="sha256")[0]
    return out, digests
