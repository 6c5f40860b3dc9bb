"""What an item is: FOLDER samples as dicts of children, user readers, plain metadata, pickling."""

from __future__ import annotations

import multiprocessing
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader

import taco_gdal
from taco_gdal.errors import TacoQueryError
from taco_gdal.torch import CHILDREN, IMAGE, SampleDataset, collate_samples
from tests.integration.torch._data import START, Written
from tests.integration.torch._loader import read_bytes
from tests.support.servers.remote import Remote

pytestmark = pytest.mark.filterwarnings("ignore:This DataLoader will create:UserWarning")


def test_file_item_is_a_dict_of_tensor_and_plain_metadata(grid: Written) -> None:
    samples = SampleDataset(taco_gdal.load(grid.path))
    item = samples[3]
    assert item["id"] == "g0003"
    assert isinstance(item[IMAGE], torch.Tensor) and item[IMAGE].shape == (2, 64, 64)
    assert np.array_equal(item[IMAGE].numpy(), grid.truth["g0003"])
    assert item["label"] == 3 and item["split"] == "train"
    assert item["stac:time_start"] == START.replace(hour=12).isoformat()
    assert isinstance(item["stac:centroid"], bytes)
    assert not any(key.startswith("internal:") for key in item)
    assert samples[-1]["id"] == "g0199"
    with pytest.raises(IndexError, match=r"0\.\.199"):
        samples[200]


def test_default_collate_batches_items(grid: Written) -> None:
    samples = SampleDataset(taco_gdal.load(grid.path), columns=["label", "stac:time_start"])
    batch = next(iter(DataLoader(samples, batch_size=5)))
    assert batch[IMAGE].shape == (5, 2, 64, 64)
    assert batch["label"].tolist() == [0, 1, 2, 3, 4]
    assert batch["id"] == ["g0000", "g0001", "g0002", "g0003", "g0004"]
    assert set(batch) == {IMAGE, "id", "label", "stac:time_start"}


def test_collate_samples_keeps_nulls_as_lists() -> None:
    items = [{"a": torch.zeros(2), "b": None}, {"a": torch.ones(2), "b": 3}]
    batch = collate_samples(items)
    assert batch["a"].shape == (2, 2) and batch["b"] == [None, 3]


def test_folder_samples_are_dicts_of_children(http_remote: Remote, tiles: Written) -> None:
    ds = taco_gdal.load(http_remote.publish(tiles.path))
    samples = SampleDataset(ds)
    item = samples[2]
    assert item["id"] == "tile002" and item["label"] == 0
    assert IMAGE not in item and set(item[CHILDREN]) == {"b0", "b1"}
    for band in ("b0", "b1"):
        child = item[CHILDREN][band]
        assert child["id"] == band and child["band_index"] == int(band[1])
        assert np.array_equal(child[IMAGE].numpy(), tiles.truth[f"tile002/{band}"])
    batch = next(iter(DataLoader(samples, batch_size=3)))
    assert batch[CHILDREN]["b1"][IMAGE].shape == (3, 1, 32, 32)


def test_level_and_frame_sources(tiles: Written) -> None:
    ds = taco_gdal.load(tiles.path)
    bands = SampleDataset(ds, level=1)
    assert len(bands) == 12 and [bands[i]["id"] for i in (0, 1)] == ["b0", "b1"]
    assert np.array_equal(bands[5][IMAGE].numpy(), tiles.truth["tile002/b1"])
    filtered = ds.sql("SELECT * FROM data WHERE label = 1")
    from_view = SampleDataset(filtered)
    from_frame = SampleDataset(filtered.data)
    assert [i["id"] for i in from_view.__getitems__([0, 1, 2])] == ["tile001", "tile003", "tile005"]
    assert np.array_equal(from_frame[1][CHILDREN]["b0"][IMAGE].numpy(), tiles.truth["tile003/b0"])
    with pytest.raises(TacoQueryError, match="internal:gdal_vsi"):
        SampleDataset(ds.sql("SELECT id, type FROM data"))


def test_user_reader_in_fork_workers(tiles: Written) -> None:
    samples = SampleDataset(taco_gdal.load(tiles.path), level=1, read=read_bytes)
    loader = DataLoader(
        samples,
        batch_size=4,
        num_workers=2,
        multiprocessing_context=multiprocessing.get_context("fork"),
        collate_fn=list,
    )
    items = [i for batch in loader for i in batch]
    assert len(items) == 12
    for item in items:
        assert item["nbytes"] == len(item["payload"]) > 0
        assert item["payload"][:2] in (b"II", b"MM")  # the GeoTIFF's own bytes
        assert IMAGE not in item


def test_pickle_is_small_and_holds_no_connection(grid: Written) -> None:
    ds = taco_gdal.load(grid.path)
    samples = SampleDataset(ds)
    data = pickle.dumps(samples)
    per_sample = len(data) / len(samples)
    assert per_sample < 600, f"{len(data)} bytes pickled for {len(samples)} samples"
    assert b"duckdb" not in data.lower()
    clone = pickle.loads(data)
    assert np.array_equal(clone[7][IMAGE].numpy(), grid.truth["g0007"])


def test_importing_taco_gdal_does_not_import_torch(grid: Written) -> None:
    code = f"""
        import sys, taco_gdal
        ds = taco_gdal.load({str(grid.path)!r})
        ds.data
        assert "torch" not in sys.modules, "torch was imported"
        """
    subprocess.run([sys.executable, "-c", textwrap.dedent(code)], check=True)


def test_missing_torch_says_how_to_install() -> None:
    code = """
        import sys
        sys.modules["torch"] = None  # what an environment without torch looks like
        try:
            import taco_gdal.torch
        except ImportError as exc:
            from taco_gdal.errors import TacoDependencyError
            assert isinstance(exc, TacoDependencyError), type(exc)
            print(exc)
        else:
            raise SystemExit("imported without torch")
        """
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], check=True, capture_output=True, text=True
    )
    assert "pip install 'taco_gdal[torch]'" in out.stdout
