"""The image an item holds is what rasterio's ``read()`` returns, for every dtype and band count.

SampleDataset reads pixels with GDAL alone (no rasterio dataset: a third of
the CPU per sample); these tests pin that the array is the one a rasterio
user gets: same dtype (int8 included, which GDAL 3.6 stores as a signed Byte),
same bands-first shape (one band included), same values.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import rasterio
from rasterio.transform import from_origin

import taco_gdal
from taco_gdal.errors import TacoIOError
from taco_gdal.io.sample import read_bands
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.torch import IMAGE, SampleDataset
from taco_gdal.torch.reading import read_raster_bytes
from taco_gdal.write import create
from tests.support.servers.remote import Remote

KINDS = [
    ("uint8", 1, None),
    ("int8", 2, None),
    ("uint16", 3, "DEFLATE"),
    ("int16", 1, "LZW"),
    ("float32", 2, None),
    ("float64", 1, "DEFLATE"),
    ("complex64", 1, None),
]


def _write(path: Path, dtype: str, bands: int, compress: str | None, seed: int) -> None:
    rng = np.random.default_rng(seed)
    data = (rng.normal(0, 40, (bands, 24, 40)) + (0 if dtype[0] in "ifc" else 60)).astype(dtype)
    profile = {
        "driver": "GTiff",
        "width": 40,
        "height": 24,
        "count": bands,
        "dtype": dtype,
        "crs": "EPSG:32630",
        "transform": from_origin(440000, 4480000, 10, 10),
        "nodata": None if dtype.startswith("complex") else 0,
    }
    if compress is not None:
        profile["compress"] = compress
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(data)


@pytest.fixture(scope="module")
def kinds(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("kinds")
    samples = []
    for i, (dtype, bands, compress) in enumerate(KINDS):
        path = folder / f"{dtype}.tif"
        _write(path, dtype, bands, compress, i)
        samples.append(Sample(dtype, path, bands=bands))
    taco = Taco(
        Tortilla(samples),
        id="kinds",
        dataset_version="1.0.0",
        description="one sample per dtype",
        licenses=["CC-BY-4.0"],
        providers=[{"name": "taco_gdal tests"}],
        tasks=["classification"],
    )
    return create(taco, folder / "kinds.tacozip", quiet=True, checksum="xxh3")[0]


def _rasterio_read(path: Path) -> np.ndarray:
    with rasterio.open(path) as src:
        return src.read()


@pytest.mark.parametrize("verify", [False, True])
def test_items_equal_rasterio_read_over_http(
    http_remote: Remote, kinds: Path, verify: bool
) -> None:
    samples = SampleDataset(taco_gdal.load(http_remote.publish(kinds)), verify=verify)
    assert len(samples) == len(KINDS)
    for item, (dtype, bands, _) in zip(samples.__getitems__(range(len(KINDS))), KINDS, strict=True):
        expected = _rasterio_read(kinds.parent / f"{dtype}.tif")
        image = item[IMAGE].numpy()
        assert expected.dtype == np.dtype(dtype) and expected.shape == (bands, 24, 40)
        # torch has no arithmetic on uint16/uint32: those come widened, values unchanged
        widened = {"uint16": np.int32, "uint32": np.int64}.get(dtype, expected.dtype)
        assert image.dtype == widened, dtype
        assert image.shape == expected.shape, dtype
        assert np.array_equal(image, expected), dtype


def test_read_bands_of_bytes_and_errors(kinds: Path) -> None:
    tif = kinds.parent / "int8.tif"
    assert np.array_equal(read_raster_bytes(tif.read_bytes(), "int8"), _rasterio_read(tif))
    with pytest.raises(TacoIOError, match="cannot open sample 'junk' as a raster"):
        read_raster_bytes(b"not a raster at all", "sample 'junk'")
    with pytest.raises(TacoIOError, match="cannot open raster"):
        read_bands(str(kinds.parent / "missing.tif"))
