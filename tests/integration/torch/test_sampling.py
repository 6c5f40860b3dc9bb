"""Splits by column and by geographic blocks; the resumable, DDP-compatible sampler."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

import taco_gdal
from taco_gdal.errors import TacoQueryError, TacoValidationError
from taco_gdal.torch import (
    ResumableSampler,
    SampleDataset,
    block_ids,
    lonlat_centroids,
    split_by_blocks,
    split_by_column,
)
from tests.integration.torch._data import SPLITS, Written


@pytest.fixture(scope="module")
def samples(grid: Written) -> SampleDataset:
    return SampleDataset(taco_gdal.load(grid.path))


def _ids(dataset: SampleDataset) -> list[str]:
    return [str(v) for v in dataset.rows.column("id").to_pylist()]


# --- splits ---------------------------------------------------------------------
def test_split_by_column(samples: SampleDataset) -> None:
    parts = split_by_column(samples)
    assert sorted(parts) == sorted(SPLITS)
    assert sum(len(p) for p in parts.values()) == 200
    assert all(item["split"] == "val" for item in parts["val"].__getitems__([0, 1, 2]))
    assert _ids(parts["train"])[:3] == ["g0000", "g0003", "g0006"]
    with pytest.raises(TacoQueryError, match="'fold'"):
        split_by_column(samples, "fold")


def test_centroids_come_from_the_footprint(samples: SampleDataset, grid: Written) -> None:
    lonlat = lonlat_centroids(samples)
    expected = np.array([grid.lonlat[i] for i in _ids(samples)])
    assert np.allclose(lonlat, expected)
    cells = block_ids(lonlat, 0.5)
    assert cells[0].tolist() == [20, 80] and cells[5].tolist() == [21, 80]


@pytest.mark.parametrize("block_size", [0.3, 0.5])
def test_blocks_keep_neighbours_together(
    samples: SampleDataset, grid: Written, block_size: float
) -> None:
    parts = split_by_blocks(samples, block_size, seed=3)
    assert sum(len(p) for p in parts.values()) == 200
    split_of = {i: name for name, part in parts.items() for i in _ids(part)}
    assert len(split_of) == 200  # every sample in exactly one split
    cell_of = {
        i: tuple(np.floor(np.array(grid.lonlat[i]) / block_size).astype(int)) for i in grid.lonlat
    }
    for a, b in itertools.combinations(grid.lonlat, 2):
        if cell_of[a] == cell_of[b]:
            assert split_of[a] == split_of[b], f"{a} and {b} share a cell but not a split"
    assert len(parts["train"]) > len(parts["val"]) > 0 and len(parts["test"]) > 0
    same = split_by_blocks(samples, block_size, seed=3)
    assert {k: _ids(v) for k, v in same.items()} == {k: _ids(v) for k, v in parts.items()}
    other = split_by_blocks(samples, block_size, seed=4)
    assert {k: _ids(v) for k, v in other.items()} != {k: _ids(v) for k, v in parts.items()}


def test_block_split_rejects_bad_arguments(samples: SampleDataset) -> None:
    with pytest.raises(TacoQueryError, match="block_size"):
        split_by_blocks(samples, 0)
    with pytest.raises(TacoQueryError, match="fractions"):
        split_by_blocks(samples, 1.0, {"train": -1})


# --- sampler --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("shuffle", "drop_last", "n"), [(True, False, 203), (False, True, 203), (True, True, 200)]
)
def test_ranks_match_distributed_sampler_and_partition(
    shuffle: bool, drop_last: bool, n: int
) -> None:
    data = list(range(n))
    ours = [
        ResumableSampler(data, 4, r, shuffle=shuffle, seed=11, drop_last=drop_last)
        for r in range(4)
    ]
    theirs = [
        DistributedSampler(data, 4, r, shuffle=shuffle, seed=11, drop_last=drop_last)
        for r in range(4)
    ]
    for epoch in (0, 1):
        for s in (*ours, *theirs):
            s.set_epoch(epoch)
        per_rank = [list(s) for s in ours]
        assert per_rank == [list(s) for s in theirs]
        assert len({len(r) for r in per_rank}) == 1  # every rank the same count
        flat = [i for r in per_rank for i in r]
        if drop_last:
            assert len(set(flat)) == len(flat) == n - n % 4
        else:
            assert set(flat) == set(data) and len(flat) - n < 4  # padding only, < one per rank


def test_resumed_sampler_continues_exactly() -> None:
    data = list(range(57))
    full = ResumableSampler(data, shuffle=True, seed=5)
    full.set_epoch(2)
    order = list(full)
    first = ResumableSampler(data, shuffle=True, seed=5)
    first.set_epoch(2)
    taken = list(itertools.islice(iter(first), 20))
    state = first.state_dict()
    restarted = ResumableSampler(data, shuffle=True, seed=5)
    restarted.load_state_dict(state)
    rest = list(restarted)
    assert taken + rest == order  # no repeat, no skip
    assert len(restarted) == 57  # the next pass is a whole epoch again
    assert list(restarted) == order


def test_resume_with_loader_workers(samples: SampleDataset) -> None:
    subset = samples.subset(range(40))
    sampler = ResumableSampler(subset, num_replicas=2, rank=1, seed=9)
    sampler.set_epoch(1)
    loader = DataLoader(subset, batch_size=4, sampler=sampler, num_workers=2)
    seen: list[str] = []
    for step, batch in enumerate(loader):
        seen += batch["id"]
        if step == 1:  # the workers have fetched ahead; 8 samples were trained on
            state = sampler.state_dict(consumed=(step + 1) * 4)
            break
    restarted = ResumableSampler(subset, num_replicas=2, rank=1, seed=9)
    restarted.load_state_dict(state)
    rest = [i for batch in DataLoader(subset, batch_size=4, sampler=restarted) for i in batch["id"]]
    reference = ResumableSampler(subset, num_replicas=2, rank=1, seed=9)
    reference.set_epoch(1)
    assert seen + rest == [_ids(subset)[i] for i in reference]


def test_state_from_another_setup_is_refused() -> None:
    state = ResumableSampler(range(10), 2, 0, seed=1).state_dict()
    with pytest.raises(TacoValidationError, match="seed: expected 2, found 1"):
        ResumableSampler(range(10), 2, 0, seed=2).load_state_dict(state)
    with pytest.raises(TacoValidationError, match="rank"):
        ResumableSampler(range(10), 2, 5)
