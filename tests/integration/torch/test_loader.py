"""DataLoader workers (fork, spawn, forkserver) read over HTTP and S3 what the parent reads.

Every item read in a worker is compared array for array with the same item
read in the parent and with the pixels the GeoTIFF was written with.  fork
reads all 200 samples of each remote (400 worker reads); spawn and forkserver
start fresh interpreters that import torch (seconds each on 2 cores), so they
read every 5th sample (40 per remote, 80 worker reads).
"""

from __future__ import annotations

import multiprocessing

import numpy as np
import pytest
from torch.utils.data import ConcatDataset, DataLoader

import taco_gdal
from taco_gdal.torch import SampleDataset
from tests.integration.torch._data import Written
from tests.integration.torch._loader import Tag, as_list
from tests.support.servers.remote import Remote

pytestmark = [
    pytest.mark.network,
    pytest.mark.slow,
    # 4 workers on a 2-core machine is the point of the test, not a mistake
    pytest.mark.filterwarnings("ignore:This DataLoader will create:UserWarning"),
]

WORKERS = 4
STRIDE = {"fork": 1, "spawn": 5, "forkserver": 5}


def _dataset(remote: Remote, grid: Written, context: str) -> SampleDataset:
    url = remote.publish(grid.path)
    ds = taco_gdal.load(url)
    samples = SampleDataset(ds, transform=Tag(remote.kind), gdal_options=remote.options())
    ds.close()
    return samples.subset(range(0, len(samples), STRIDE[context]))


@pytest.mark.parametrize("context", ["fork", "spawn", "forkserver"])
def test_workers_read_what_the_parent_reads(
    context: str, http_remote: Remote, s3_remote: Remote, grid: Written
) -> None:
    datasets = [_dataset(r, grid, context) for r in (http_remote, s3_remote)]
    in_parent = {
        (item["source"], item["id"]): item["image"].numpy()
        for samples in datasets
        for item in samples.__getitems__(list(range(len(samples))))
    }
    mp_context = multiprocessing.get_context(context)
    if context == "forkserver":  # what a user does: import torch once, in the server
        mp_context.set_forkserver_preload(["torch", "taco_gdal.torch", Tag.__module__])
    loader = DataLoader(
        ConcatDataset(datasets),
        batch_size=8,
        num_workers=WORKERS,
        multiprocessing_context=mp_context,
        collate_fn=as_list,
    )
    seen = [item for batch in loader for item in batch]

    expected_reads = 2 * len(range(0, len(grid.truth), STRIDE[context]))
    assert len(seen) == expected_reads >= (400 if context == "fork" else 80)
    assert len({(i["source"], i["id"]) for i in seen}) == expected_reads
    wrong = [
        (i["source"], i["id"])
        for i in seen
        if not np.array_equal(i["image"].numpy(), in_parent[(i["source"], i["id"])])
        or not np.array_equal(i["image"].numpy(), grid.truth[i["id"]])
    ]
    assert wrong == [], f"{len(wrong)} of {len(seen)} worker reads differ: {wrong[:5]}"
