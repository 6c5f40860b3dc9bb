"""A plain DataLoader (default_collate, worker processes) over a dataset with null metadata
and uint16 rasters: it iterates, and the image tensors support arithmetic."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader

import taco_gdal
from taco_gdal.errors import TacoQueryError
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.torch import IMAGE, SampleDataset
from taco_gdal.write import create
from tests.support.blob import geotiff_bytes

pytestmark = pytest.mark.filterwarnings("ignore:This DataLoader will create:UserWarning")

COUNT = 20
START = datetime(2024, 5, 1, 10, 0)


@pytest.fixture(scope="module")
def with_nulls(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, np.ndarray]]:
    """20 uint16 GeoTIFF samples; every other row has null time_end, label, cloud, note."""
    root = tmp_path_factory.mktemp("nulls")
    truth: dict[str, np.ndarray] = {}
    samples = []
    for i in range(COUNT):
        data, array = geotiff_bytes(300 + i, pixels=16, bands=2)
        path = root / f"n{i:02d}.tif"
        path.write_bytes(data)
        truth[f"n{i:02d}"] = array
        even = i % 2 == 0
        samples.append(
            Sample(
                f"n{i:02d}",
                path,
                **{
                    "stac:time_start": START + timedelta(days=i),
                    "stac:time_end": START + timedelta(days=i, hours=1) if even else None,
                    "label": i if even else None,
                    "cloud": i / 10 if even else None,
                    "note": f"row {i}" if even else None,
                    "wkb": bytes([i]) if even else None,
                    "flag": even if i % 4 else None,
                },
            )
        )
    taco = Taco(
        Tortilla(samples),
        id="nulls",
        dataset_version="1.0.0",
        description="samples with null metadata",
        licenses=["CC0-1.0"],
        providers=[{"name": "taco_gdal tests"}],
        tasks=["other"],
    )
    return create(taco, root / "nulls.tacozip", quiet=True)[0], truth


def test_default_dataloader_with_workers_batches_nulls(
    with_nulls: tuple[Path, dict[str, np.ndarray]],
) -> None:
    path, truth = with_nulls
    loader = DataLoader(SampleDataset(taco_gdal.load(path)), batch_size=8, num_workers=2)
    batches = list(loader)
    assert [len(b["id"]) for b in batches] == [8, 8, 4]
    first = batches[0]
    image = first[IMAGE]
    assert image.dtype == torch.int32 and image.shape == (8, 2, 16, 16)
    assert math.isfinite(float(image.float().mean()))
    assert int((image + 1).min()) >= 1
    assert np.array_equal(image[1].numpy(), truth["n01"])
    assert first["stac:time_end"][:2] == ["2024-05-01T11:00:00", ""]
    assert first["note"][:2] == ["row 0", ""]
    assert first["wkb"][:2] == [b"\x00", b""]
    assert first["label"][0] == 0 and torch.isnan(first["label"][1])
    assert first["cloud"][0] == 0 and torch.isnan(first["cloud"][1])
    assert torch.isnan(first["flag"][0]) and first["flag"][2] == 1
    ids = [i for b in batches for i in b["id"]]
    assert ids == sorted(truth)


def test_dtype_casts_the_image(with_nulls: tuple[Path, dict[str, np.ndarray]]) -> None:
    path, truth = with_nulls
    samples = SampleDataset(taco_gdal.load(path), dtype=torch.float32)
    item = samples[3]
    assert item[IMAGE].dtype == torch.float32
    assert np.array_equal(item[IMAGE].numpy(), truth["n03"].astype(np.float32))
    with pytest.raises(TacoQueryError, match=r"dtype expected a torch\.dtype"):
        SampleDataset(taco_gdal.load(path), dtype="float32")  # type: ignore[arg-type]
