"""read_threads: a batch's samples read by several threads give the same items, in order.

Over the Range server (one GET per sample still, counted from its log), in the
parent and in fork DataLoader workers (each worker builds its own pool: the
parent's threads do not survive the fork).
"""

from __future__ import annotations

import multiprocessing
import pickle

import numpy as np
import pytest
from torch.utils.data import DataLoader

import taco_gdal
from taco_gdal.errors import TacoQueryError
from taco_gdal.torch import IMAGE, SampleDataset
from tests.integration.torch._data import Written
from tests.integration.torch._loader import as_list
from tests.servers.remote import Remote

pytestmark = [
    pytest.mark.network,
    pytest.mark.filterwarnings("ignore:This DataLoader will create:UserWarning"),
]


def test_threads_read_the_same_items_in_order(http_remote: Remote, grid: Written) -> None:
    ds = taco_gdal.load(http_remote.publish(grid.path))
    threaded = SampleDataset(ds, read_threads=4, columns=["label"])
    indices = [17, 3, 199, 3, 42, 0, 120, 5]
    http_remote.log.clear()
    items = threaded.__getitems__(indices)
    gets = [r for r in http_remote.log.records() if r.method == "GET"]
    assert [i["id"] for i in items] == [f"g{i:04d}" for i in indices]
    for i, item in zip(indices, items, strict=True):
        assert np.array_equal(item[IMAGE].numpy(), grid.truth[f"g{i:04d}"])
    assert len(gets) <= len(indices)  # one GET per sample at most (3 is read twice)
    assert pickle.loads(pickle.dumps(threaded))[7][IMAGE].shape == (2, 64, 64)


def test_threads_in_fork_workers(http_remote: Remote, grid: Written) -> None:
    ds = taco_gdal.load(http_remote.publish(grid.path))
    threaded = SampleDataset(ds, read_threads=3, columns=["label"]).subset(range(0, 200, 2))
    threaded[0]  # the parent starts its pool before the workers fork
    loader = DataLoader(
        threaded,
        batch_size=5,
        num_workers=2,
        multiprocessing_context=multiprocessing.get_context("fork"),
        collate_fn=as_list,
    )
    seen = [item for batch in loader for item in batch]
    assert [i["id"] for i in seen] == [f"g{i:04d}" for i in range(0, 200, 2)]
    wrong = [i["id"] for i in seen if not np.array_equal(i[IMAGE].numpy(), grid.truth[i["id"]])]
    assert wrong == []


@pytest.mark.parametrize("value", [0, -1, 2.0, True])
def test_read_threads_must_be_a_positive_integer(grid: Written, value: object) -> None:
    with pytest.raises(TacoQueryError, match="read_threads expected an integer >= 1"):
        SampleDataset(taco_gdal.load(grid.path), read_threads=value)  # type: ignore[arg-type]
