"""The dataset shapes of the conformance suite, as neutral JSON descriptions.

One description is written by both writers: ``_refbuild.build`` (tacotoolbox) and
``_tgbuild.build`` (taco_gdal), so the two outputs can be compared row by row and
byte by byte.  The format of a description is documented in ``_refbuild``.

Every sample file is a tiny 8x8 single-band GeoTIFF made with rasterio; its
pixels and georeferencing depend on a seed, so every file has distinct bytes.
Ids include non-ASCII characters at every level.
"""

from __future__ import annotations

import copy
import datetime as dt
import pathlib
from collections.abc import Iterator
from typing import Any, Final

import numpy as np
from rasterio.io import MemoryFile
from rasterio.transform import from_origin
from shapely.geometry import box

__all__ = [
    "FILTERS",
    "SHAPES",
    "SPLIT_SIZES",
    "ZIP64_SAMPLES",
    "iter_files",
    "make_tiff",
    "pixels",
    "shape",
    "write_files",
]

PIXEL: Final = 0.1
SIDE: Final = 8
T0: Final = int(dt.datetime(2021, 1, 1, 12, tzinfo=dt.UTC).timestamp())
DAY: Final = 86_400
ZIP64_SAMPLES: Final = 65_600
"""More than 65,535 members: the EOCD counts overflow, ZIP64 records are required."""


def _origin(seed: int) -> tuple[float, float]:
    # Latitudes vary too: tacotoolbox 0.18 rejects an extent with min_lat == max_lat.
    return (float(seed % 50) * 2.0 - 40.0, 40.0 - float(seed % 5) * 0.2 - float(seed // 50) * 2.0)


def make_tiff(seed: int) -> bytes:
    """An 8x8 uint8 GeoTIFF (EPSG:4326) whose pixels and origin depend on ``seed``."""
    x0, y0 = _origin(seed)
    with MemoryFile() as memfile:
        with memfile.open(
            driver="GTiff",
            width=SIDE,
            height=SIDE,
            count=1,
            dtype="uint8",
            crs="EPSG:4326",
            transform=from_origin(x0, y0, PIXEL, PIXEL),
        ) as dst:
            dst.write(pixels(seed)[None, :, :])
        return bytes(memfile.read())


def pixels(seed: int) -> np.ndarray[Any, np.dtype[np.uint8]]:
    """The 8x8 band ``make_tiff(seed)`` holds."""
    base = np.arange(SIDE * SIDE, dtype=np.uint16).reshape(SIDE, SIDE)
    return ((base * 3 + seed * 7) % 256).astype(np.uint8)


def _stac(seed: int, day: int) -> dict[str, Any]:
    x0, y0 = _origin(seed)
    return {
        "crs": "EPSG:4326",
        "tensor_shape": [1, SIDE, SIDE],
        "geotransform": [x0, PIXEL, 0.0, y0, 0.0, -PIXEL],
        "time_start": T0 + day * DAY,
    }


def _istac(seed: int, day: int) -> dict[str, Any]:
    x0, y0 = _origin(seed)
    side = SIDE * PIXEL * 4
    return {
        "crs": "EPSG:4326",
        "geometry_hex": box(x0, y0 - side, x0 + side, y0).wkb_hex,
        "time_start": T0 + day * DAY,
        "time_end": T0 + day * DAY + 3600,
    }


def _file(sample_id: str, seed: int, day: int, **fields: Any) -> dict[str, Any]:
    return {
        "id": sample_id,
        "file": f"s{seed:05d}.tif",
        "seed": seed,
        "stac": _stac(seed, day),
        "fields": fields,
    }


def _collection(name: str) -> dict[str, Any]:
    return {
        "id": f"conformance_{name}",
        "dataset_version": "1.0.0",
        "description": f"taco_gdal conformance dataset '{name}' (València, ñ, 東京).",
        "licenses": ["CC-BY-4.0"],
        "providers": [{"name": "taco_gdal conformance suite"}],
        "tasks": ["classification"],
        "title": f"Conformance {name}",
        "keywords": ["conformance", "taco"],
    }


def _flat() -> dict[str, Any]:
    ids = ["a_0", "ñandú_1", "東京_2", "z_3"]
    labels = ["clear", "cloudy", "señal", "clear"]
    samples = [
        _file(sid, seed=i, day=i, cloud_cover=12.5 * i, label=labels[i])
        for i, sid in enumerate(ids)
    ]
    return {"collection": _collection("flat"), "pad_to": None, "samples": samples}


def _two(folder_ids: list[str] | None = None, name: str = "two") -> dict[str, Any]:
    folder_ids = folder_ids or ["río_0", "tile_1", "tile_2", "tile_3"]
    child_ids = ["rgb", "máscara"]
    samples = []
    for i, fid in enumerate(folder_ids):
        children = [
            _file(cid, seed=10 + 2 * i + j, day=i, band_count=j + 1)
            for j, cid in enumerate(child_ids)
        ]
        samples.append(
            {
                "id": fid,
                "file": None,
                "children": children,
                "istac": _istac(10 + 2 * i, day=i),
                "fields": {"region": f"región {i}"},
            }
        )
    return {"collection": _collection(name), "pad_to": None, "samples": samples}


def _three() -> dict[str, Any]:
    samples = []
    for i, tid in enumerate(["t0", "tëst_1"]):
        inner = []
        for j, sid in enumerate(["s1", "s2"]):
            seed = 30 + 4 * i + 2 * j
            files = [
                _file(bid, seed=seed + k, day=2 * i + j, gain=0.5 * k)
                for k, bid in enumerate(["b0", "b1"])
            ]
            inner.append(
                {
                    "id": sid,
                    "file": None,
                    "children": files,
                    "istac": _istac(seed, day=2 * i + j),
                    "fields": {"sensor": f"S{j + 1}"},
                }
            )
        samples.append(
            {"id": tid, "file": None, "children": inner, "fields": {"zone": f"zona {i}"}}
        )
    return {"collection": _collection("three"), "pad_to": None, "samples": samples}


def _padded() -> dict[str, Any]:
    """Two folders of three files each, padded to four (``__TACOPAD__0``)."""
    spec = _two(["g0", "g1"], name="padded")
    for i, folder in enumerate(spec["samples"]):
        folder["children"].append(_file("extra", seed=50 + i, day=i, band_count=3))
        folder["pad_to"] = 4
    return spec


def _misplaced() -> dict[str, Any]:
    """Folder ids whose sorted order differs from their order (reference section 1.6)."""
    return _two(["t2", "t10", "b", "a"], name="misplaced")


def _zip64() -> dict[str, Any]:
    """Flat, ZIP64_SAMPLES samples sharing four source files, one int field."""
    samples = [
        {"id": f"s{i:05d}", "file": f"s{i % 4:05d}.tif", "seed": i % 4, "fields": {"n": i}}
        for i in range(ZIP64_SAMPLES)
    ]
    return {"collection": _collection("zip64"), "pad_to": None, "samples": samples}


SHAPES: Final = {
    "flat": _flat,
    "two": _two,
    "three": _three,
    "padded": _padded,
    "misplaced": _misplaced,
    "zip64": _zip64,
}
"""Shape name -> description factory."""

SPLIT_SIZES: Final = {
    "flat": "1KB",
    "two": "2KB",
    "three": "2KB",
    "padded": "2KB",
    "misplaced": "2KB",
}
"""``split_size`` giving two or more parts of at least two level-0 samples where the shape
has enough (tacotoolbox 0.18 rejects a part whose extent is a single point)."""

FILTERS: Final[dict[str, list[dict[str, Any]]]] = {
    # kind, args, level and the level-0 ids expected (sorted); the live suite checks
    # that tacoreader 2.4.21 returns exactly these on what tacotoolbox 0.26.9 writes.
    "flat": [
        {
            "kind": "bbox",
            "args": [-39.9, 39.0, -35.0, 41.0],
            "level": 0,
            "expect": ["a_0", "ñandú_1", "東京_2"],
        },
        {
            "kind": "datetime",
            "args": ["2021-01-02/2021-01-03"],
            "level": 0,
            "expect": ["ñandú_1", "東京_2"],
        },
    ],
    "two": [
        {
            "kind": "bbox",
            "args": [-20.0, 39.0, -15.0, 41.0],
            "level": 0,
            "expect": ["río_0", "tile_1"],
        },
        {"kind": "datetime", "args": ["2021-01-02/2021-01-02"], "level": 0, "expect": ["tile_1"]},
        {"kind": "bbox", "args": [-17.8, 39.0, -17.4, 41.0], "level": 1, "expect": ["río_0"]},
        {
            "kind": "datetime",
            "args": ["2021-01-03/2021-01-05"],
            "level": 1,
            "expect": ["tile_2", "tile_3"],
        },
    ],
    "three": [
        {"kind": "bbox", "args": [24.5, 38.0, 25.0, 39.0], "level": 1, "expect": ["t0"]},
        {"kind": "datetime", "args": ["2021-01-03/2021-01-03"], "level": 1, "expect": ["tëst_1"]},
        {"kind": "bbox", "args": [26.0, 38.5, 32.6, 40.0], "level": 2, "expect": ["t0", "tëst_1"]},
        {"kind": "datetime", "args": ["2021-01-02/2021-01-02"], "level": 2, "expect": ["t0"]},
    ],
    "padded": [
        {"kind": "bbox", "args": [-20.0, 39.0, -15.0, 41.0], "level": 0, "expect": ["g0", "g1"]},
        {"kind": "datetime", "args": ["2021-01-02/2021-01-02"], "level": 0, "expect": ["g1"]},
        {"kind": "bbox", "args": [-17.8, 39.0, -17.4, 41.0], "level": 1, "expect": ["g0"]},
        {"kind": "datetime", "args": ["2021-01-02/2021-01-05"], "level": 1, "expect": ["g1"]},
    ],
    "misplaced": [
        {"kind": "bbox", "args": [-20.0, 39.0, -15.0, 41.0], "level": 0, "expect": ["t10", "t2"]},
        {"kind": "bbox", "args": [-17.8, 39.0, -17.4, 41.0], "level": 1, "expect": ["t2"]},
        {"kind": "datetime", "args": ["2021-01-03/2021-01-05"], "level": 1, "expect": ["a", "b"]},
    ],
}


def shape(name: str) -> dict[str, Any]:
    """A fresh copy of the description of shape ``name``."""
    try:
        factory = SHAPES[name]
    except KeyError:
        raise KeyError(f"unknown shape {name!r}; expected one of {sorted(SHAPES)}") from None
    return copy.deepcopy(factory())


def iter_files(spec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every FILE node of ``spec``, depth first."""
    stack = list(reversed(spec["samples"]))
    while stack:
        node = stack.pop()
        if node.get("file") is not None:
            yield node
        else:
            stack.extend(reversed(node["children"]))


def write_files(spec: dict[str, Any], root: pathlib.Path) -> pathlib.Path:
    """Write every GeoTIFF ``spec`` refers to under ``root``; return ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    for node in iter_files(spec):
        target = root / node["file"]
        if not target.exists():
            target.write_bytes(make_tiff(node["seed"]))
    return root
