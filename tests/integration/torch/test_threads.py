"""read_threads: a batch's samples read by several threads give the same items, in order.

Over the Range server (one GET per sample still, counted from its log), in the
parent and in fork DataLoader workers (each worker builds its own pool: the
parent's threads do not survive the fork).  Threads are the default for the
built-in reader: pool threads read under the calling thread's ``Env``
options, and a user reader gets one thread unless it asks for more.
"""

from __future__ import annotations

import multiprocessing
import pickle
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from torch.utils.data import DataLoader

import taco_gdal
from taco_gdal.env import get_config
from taco_gdal.errors import TacoIOError, TacoQueryError
from taco_gdal.format.names import GDAL_VSI
from taco_gdal.format.vsi import parse_subfile
from taco_gdal.io.vsi import READ_ATTEMPTS
from taco_gdal.torch import IMAGE, MAX_READ_THREADS, SampleDataset
from tests.integration.torch._data import Written, write_grid
from tests.integration.torch._loader import as_list
from tests.support.servers.remote import Remote

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
    # the parent's pool threads hold GDAL connections when the workers fork
    assert [i["id"] for i in threaded.__getitems__([0, 1, 2, 3])] == [
        "g0000",
        "g0002",
        "g0004",
        "g0006",
    ]
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


def _option_and_thread(path: str, row: dict[str, Any]) -> dict[str, Any]:
    """A thread-safe user reader: which option value and which thread read the row."""
    return {"option": get_config("TACO_GDAL_TEST_OPTION"), "thread": threading.get_ident()}


def test_pool_threads_read_under_the_callers_env(grid: Written) -> None:
    ds = SampleDataset(taco_gdal.load(grid.path), read=_option_and_thread, read_threads=4)
    with taco_gdal.Env(TACO_GDAL_TEST_OPTION="from the caller"):
        items = ds.__getitems__(list(range(12)))
    assert [i["option"] for i in items] == ["from the caller"] * 12
    pooled = [i for i in items if i["thread"] != threading.get_ident()]
    assert len(pooled) == 11  # the first read of the container is made alone, by the caller
    assert [i["option"] for i in ds.__getitems__([20, 21, 22])] == [None] * 3  # no Env: none


def _overlaps(header: str | None, span: tuple[int, int]) -> bool:
    assert header is not None and header.startswith("bytes="), header
    first, last = (int(v) for v in header.removeprefix("bytes=").split("-"))
    return first < span[1] and span[0] <= last


def test_pool_threads_take_the_callers_retry_setting(http_remote: Remote, grid: Written) -> None:
    """503s: GDAL's retries (the profile's 4) absorb three; the caller's Env can say 0.

    ``VSIFile`` tries a read 3 times: with ``GDAL_HTTP_MAX_RETRY=0`` reaching
    the pool thread, a sample that always answers 503 costs exactly 3 GETs
    (with the profile's 4 retries it would cost 15).  Only the GETs of that
    sample's bytes are counted: the batch's other sample fails in the pool too.
    """
    url = http_remote.publish(grid.path)
    ds = SampleDataset(taco_gdal.load(url), columns=["label"])
    assert ds.read_threads == MAX_READ_THREADS  # the default for the built-in reader
    ds.__getitems__([0, 1])  # the container is opened: later batches go to the pool whole
    name = url.rsplit("/", 1)[-1]
    http_remote.server.fail(name, times=3, status=503, methods="GET")
    assert [i["id"] for i in ds.__getitems__([0, 11])] == ["g0000", "g0011"]

    failing = parse_subfile(str(ds.rows.levels[0].rows([12])[0][GDAL_VSI]))
    span = (failing.offset, failing.offset + failing.size)
    http_remote.server.fail(name, times=None, status=503, methods="GET")
    http_remote.log.clear()
    try:
        with taco_gdal.Env(GDAL_HTTP_MAX_RETRY=0), pytest.raises(TacoIOError):
            ds.__getitems__([12, 150])
    finally:
        assert ds._pool is not None
        ds._pool.shutdown(wait=True)  # the other sample's read ends before the faults do
        gets = [r for r in http_remote.log.records(method="GET") if _overlaps(r.range, span)]
        http_remote.server.reset()
    assert len(gets) == READ_ATTEMPTS, gets


def test_default_threads(grid: Written, tmp_path: Path) -> None:
    small = taco_gdal.load(grid.path)
    assert SampleDataset(small).read_threads == MAX_READ_THREADS
    assert SampleDataset(small, read=_option_and_thread).read_threads == 1
    assert SampleDataset(small, read=_option_and_thread, read_threads=3).read_threads == 3
    # 1100 x 1100 x 2 uint16 is about 4.8 MB: two in flight would pass 8 MB
    large = write_grid(tmp_path, 2, pixels=1100, bands=2)
    dataset = SampleDataset(taco_gdal.load(large.path))
    assert dataset.read_threads == 1
    assert [
        np.array_equal(i[IMAGE].numpy(), large.truth[i["id"]]) for i in dataset.__getitems__([0, 1])
    ] == [True, True]
