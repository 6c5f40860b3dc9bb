"""Many small TACO ZIP parts, written with the lower layer of taco_gdal's writer, and their TACOCAT.

Part ``p`` holds ``per_part`` FILE samples (``p0042_0`` ...) at level 0, each
its own copy of one small GeoTIFF (made with rasterio) followed by the sample's
id, so every sample's bytes are distinct.  The samples of part ``p`` sit at
one point of a 100 x 50 grid over the globe (``istac:centroid``), and the
part's COLLECTION extent is a small box around it; ``taco:sources`` of the
TACOCAT lists every part with its extent.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import rasterio
import shapely
from rasterio.transform import from_origin

from taco_gdal.format.header import HeaderEntry
from taco_gdal.format.names import (
    COLLECTION_FILE,
    CURRENT_ID,
    DATA_DIR,
    FIELD_SCHEMA_KEY,
    FILE,
    ID,
    ISTAC_CENTROID,
    ISTAC_TIME_START,
    OFFSET,
    PARENT_ID,
    PIT_SCHEMA_KEY,
    SIZE,
    TACO_VERSION,
    TYPE,
    level_member,
)
from taco_gdal.write.tacocat import create_tacocat
from taco_gdal.write.zipstream import ZipWriter

GRID_X = 100


def part_point(part: int) -> tuple[float, float]:
    """Where the samples of ``part`` are (lon, lat)."""
    return -178.0 + 3.5 * (part % GRID_X), -78.0 + 3.1 * (part // GRID_X)


def part_name(part: int) -> str:
    return f"part{part:05d}.tacozip"


def _tif_bytes() -> bytes:
    buffer = io.BytesIO()
    profile = {
        "driver": "GTiff",
        "width": 8,
        "height": 8,
        "count": 1,
        "dtype": "uint8",
        "crs": "EPSG:4326",
        "transform": from_origin(0, 0, 0.1, 0.1),
    }
    with rasterio.MemoryFile() as memory:
        with memory.open(**profile) as dst:
            dst.write(np.arange(64, dtype=np.uint8).reshape(1, 8, 8))
        buffer.write(memory.read())
    return buffer.getvalue()


def _collection(part: int, per_part: int, schema: pa.Schema) -> dict[str, object]:
    lon, lat = part_point(part)
    return {
        "id": "parts",
        "dataset_version": "1.0.0",
        "description": "many small parts",
        "licenses": ["CC-BY-4.0"],
        "providers": [{"name": "tests"}],
        "tasks": ["classification"],
        "taco_version": TACO_VERSION,
        "extent": {
            "spatial": [lon - 0.1, lat - 0.1, lon + 0.1, lat + 0.1],
            "temporal": ["2020-01-01T00:00:00Z", "2020-01-02T00:00:00Z"],
        },
        PIT_SCHEMA_KEY: {"root": {"n": per_part, "type": FILE}, "hierarchy": {}},
        FIELD_SCHEMA_KEY: {"level0": [[f.name, str(f.type).lower(), ""] for f in schema]},
    }


def write_part(path: Path, part: int, per_part: int, tif: bytes, pad: int = 0) -> None:
    """One part; ``pad`` bytes after each sample's GeoTIFF make its samples that much bigger."""
    lon, lat = part_point(part)
    ids = [f"p{part:05d}_{k}" for k in range(per_part)]
    with path.open("wb") as out:
        zw = ZipWriter(out)
        zw.add_taco_header()
        infos = [zw.add_bytes(f"{DATA_DIR}/{i}", tif + i.encode() + bytes(pad)) for i in ids]
        table = pa.table(
            {
                ID: ids,
                TYPE: [FILE] * per_part,
                ISTAC_CENTROID: pa.array([shapely.Point(lon, lat).wkb] * per_part, pa.binary()),
                ISTAC_TIME_START: pa.array(
                    [np.datetime64("2020-01-01T12:00:00", "us")] * per_part, pa.timestamp("us")
                ),
                CURRENT_ID: pa.array(range(per_part), pa.int64()),
                PARENT_ID: pa.array(range(per_part), pa.int64()),
                OFFSET: pa.array([i.data_offset for i in infos], pa.int64()),
                SIZE: pa.array([i.size for i in infos], pa.int64()),
            }
        )
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        level = zw.add_bytes(level_member(0), sink.getvalue().to_pybytes())
        text = json.dumps(_collection(part, per_part, table.schema)).encode()
        collection = zw.add_bytes(COLLECTION_FILE, text)
        zw.set_header_entries(
            [
                HeaderEntry(level.data_offset, level.size),
                HeaderEntry(collection.data_offset, collection.size),
            ]
        )
        zw.close()


def write_parts(
    folder: Path, parts: int, per_part: int = 2, big: tuple[int, ...] = ()
) -> list[Path]:
    """``parts`` TACO ZIPs in ``folder`` and their TACOCAT (``.tacocat/`` and ``__TACOCAT__``).

    The samples of the parts in ``big`` carry 200 kB more (to see byte ranges within a part).
    """
    folder.mkdir(parents=True, exist_ok=True)
    tif = _tif_bytes()
    paths = []
    for part in range(parts):
        path = folder / part_name(part)
        write_part(path, part, per_part, tif, 200_000 if part in big else 0)
        paths.append(path)
    create_tacocat(paths, folder, quiet=True)
    return paths
