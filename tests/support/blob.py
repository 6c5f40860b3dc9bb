"""A container-like blob of real GeoTIFFs at known offsets, made without the writer.

The remote I/O layer (profile, pinning, telemetry, faults) is tested on this, so
those tests need neither the writer nor the reader.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import rasterio
from rasterio.io import MemoryFile
from rasterio.transform import from_origin

from taco_gdal.format.vsi import build_subfile


def geotiff_bytes(seed: int, pixels: int = 256, bands: int = 4) -> tuple[bytes, np.ndarray]:
    """A tiled uint16 GeoTIFF of random (incompressible) pixels, and the pixels."""
    data = np.random.default_rng(seed).integers(0, 60000, (bands, pixels, pixels), dtype="uint16")
    profile = {
        "driver": "GTiff",
        "width": pixels,
        "height": pixels,
        "count": bands,
        "dtype": "uint16",
        "tiled": True,
        "blockxsize": 128,
        "blockysize": 128,
        "crs": "EPSG:4326",
        "transform": from_origin(0, 1, 1 / pixels, 1 / pixels),
    }
    with MemoryFile() as memory:
        with memory.open(**profile) as dst:
            dst.write(data)
        return bytes(memory.read()), data


@dataclass(frozen=True)
class Member:
    offset: int
    size: int
    pixels: np.ndarray

    def vsi(self, container: str) -> str:
        return build_subfile(self.offset, self.size, container)


@dataclass(frozen=True)
class Blob:
    path: Path
    members: tuple[Member, ...]


def make_blob(folder: Path, name: str = "blob.tacozip", count: int = 3, gap: int = 40_000) -> Blob:
    """``count`` GeoTIFFs (~0.5 MB each) separated by ``gap`` filler bytes."""
    rng = np.random.default_rng(99)
    out = bytearray(rng.integers(0, 255, gap, dtype="uint8").tobytes())
    members = []
    for i in range(count):
        tif, pixels = geotiff_bytes(i)
        members.append(Member(len(out), len(tif), pixels))
        out += tif
        out += rng.integers(0, 255, gap, dtype="uint8").tobytes()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(bytes(out))
    return Blob(path, tuple(members))


def read_pixels(vsi_path: str) -> np.ndarray:
    with rasterio.open(vsi_path) as src:
        return src.read()
