"""Request counts from the server log: an epoch costs one GET per sample, nothing per worker.

The parent loads the dataset (its metadata requests are counted), builds the
SampleDataset (no request: the rows come from the loaded metadata, the pin
from the load), then a 4-worker fork DataLoader reads all 200 samples.  The
epoch must add exactly one GET per sample, each the sample's own byte range,
and no metadata read (no worker re-opens the container).  The only other
requests allowed are the container's size/ETag check, at most one per worker
process: a forked child starts with GDAL's network cache cleared
(``taco_gdal._fork``), and GDAL 3.6 asks a container's size before its first
read (a HEAD over HTTP, a small ranged GET on S3), which is also the request
that checks the container against the parent's pin.
"""

from __future__ import annotations

import multiprocessing

import pytest
from torch.utils.data import DataLoader

import taco_gdal
from taco_gdal.format.names import GDAL_VSI
from taco_gdal.format.vsi import parse_subfile
from taco_gdal.torch import SampleDataset
from tests.integration.torch._data import Written
from tests.support.servers.log import RequestRecord
from tests.support.servers.remote import Remote

pytestmark = [
    pytest.mark.network,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore:This DataLoader will create:UserWarning"),
]

WORKERS = 4
CHUNK = 16384
"""GDAL's /vsicurl/ chunk: ranges are aligned to it, so a GET over-reads less than one chunk."""
STAT_RANGE = "bytes=0-16383"
"""What GDAL's size check of a container is on S3 (a HEAD over HTTP)."""


def _span(path: str) -> tuple[int, int]:
    sample = parse_subfile(path)
    return sample.offset, sample.offset + sample.size


def _bounds(header: str | None) -> tuple[int, int]:
    assert header is not None and header.startswith("bytes="), header
    first, last = header.removeprefix("bytes=").split("-")
    return int(first), int(last) + 1


def _covered(span: tuple[int, int], reads: list[RequestRecord]) -> bool:
    """Whether the GETs together fetched every byte of ``span`` (GDAL reads whole chunks,
    so a sample's first chunk may have come with the previous sample's GET)."""
    lo, hi = span
    for first, end in sorted(_bounds(r.range) for r in reads):
        if first <= lo < end:
            lo = end
    return lo >= hi


def test_epoch_costs_one_get_per_sample(remote: Remote, grid: Written) -> None:
    url = remote.publish(grid.path)
    name = url.rsplit("/", 1)[-1]
    remote.fresh()
    ds = taco_gdal.load(url)
    load_requests = remote.log.records()
    samples = SampleDataset(ds, gdal_options=remote.options())
    assert remote.log.records() == load_requests, "building the dataset made requests"
    spans = [_span(p) for p in samples.rows.levels[0].table.column(GDAL_VSI).to_pylist()]
    remote.server.reset()  # the log of the epoch alone

    loader = DataLoader(
        samples,
        batch_size=10,
        num_workers=WORKERS,
        multiprocessing_context=multiprocessing.get_context("fork"),
    )
    ids = [i for batch in loader for i in batch["id"]]

    assert sorted(ids) == sorted(grid.truth)
    epoch = remote.log.records()
    stats = [r for r in epoch if r.method == "HEAD" or r.range == STAT_RANGE]
    reads = [r for r in epoch if r not in stats]
    assert all(r.path.endswith(name) and r.method == "GET" for r in reads), remote.log.describe()
    assert len(reads) == len(spans) == 200, remote.log.describe()
    assert len(stats) <= WORKERS, f"more than one size check per worker:\n{remote.log.describe()}"
    fetched = [r for r in epoch if r.method == "GET"]  # S3's size check brings bytes 0..16383
    assert all(_covered(span, fetched) for span in spans), "a sample's bytes were not all fetched"
    sample_bytes = sum(hi - lo for lo, hi in spans)
    overread = sum(r.bytes_sent for r in reads) - sample_bytes
    assert 0 <= overread <= len(spans) * CHUNK, f"{overread} bytes over-read"
    assert 1 <= len(load_requests) <= 4, "\n".join(map(str, load_requests))
