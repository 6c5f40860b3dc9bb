"""split_by_blocks(buffer_m=) leaves nothing for check_splits; split_by_column warns on leaks."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import taco_gdal
from taco_gdal.errors import TacoLeakageWarning
from taco_gdal.read.dataset import TacoDataset
from taco_gdal.torch import SampleDataset, split_by_blocks, split_by_column
from tests.support.leaky import DUPLICATE, SPLITS, write_leaky

FRACTIONS = {"train": 0.6, "val": 0.2, "test": 0.2}


@pytest.fixture(scope="module")
def leaky(tmp_path_factory: pytest.TempPathFactory) -> TacoDataset:
    return taco_gdal.load(str(write_leaky(tmp_path_factory.mktemp("leaky"))[0]))


def _as_view(ds: TacoDataset, parts: dict[str, SampleDataset]) -> TacoDataset:
    """``ds`` limited to the samples ``parts`` kept, with their split in column ``fold``."""
    split_of = {str(i): name for name, part in parts.items() for i in part.rows.column("id")}
    cases = " ".join(f"WHEN id = '{i}' THEN '{name}'" for i, name in split_of.items())
    kept = ", ".join(f"'{i}'" for i in split_of)
    return ds.sql(f"SELECT *, CASE {cases} END AS fold FROM data WHERE id IN ({kept})")


@pytest.mark.parametrize("buffer_m", [0.0, 100.0, 200.0])
def test_buffered_blocks_pass_check_splits(leaky: TacoDataset, buffer_m: float) -> None:
    samples = SampleDataset(leaky)
    # cells of 0.005 degrees (about 400 m by 70N, 500 m by 40N) split planted neighbours
    plain = _as_view(leaky, split_by_blocks(samples, 0.005, FRACTIONS, seed=1))
    assert not taco_gdal.check_splits(plain, "fold", buffer_m).ok  # the blocks alone leak
    parts = split_by_blocks(samples, 0.005, FRACTIONS, seed=1, buffer_m=buffer_m)
    view = _as_view(leaky, parts)
    report = taco_gdal.check_splits(view, "fold", buffer_m)
    assert report.ok, report.lines()
    kept = sum(len(p) for p in parts.values())
    assert 0 < len(SPLITS) - kept <= len(taco_gdal.check_splits(plain, "fold", buffer_m).lines())


def test_dropped_samples_come_from_the_larger_split(leaky: TacoDataset) -> None:
    samples = SampleDataset(leaky)
    plain = split_by_blocks(samples, 0.005, FRACTIONS, seed=1)
    buffered = split_by_blocks(samples, 0.005, FRACTIONS, seed=1, buffer_m=100.0)
    before = {name: {str(i) for i in part.rows.column("id")} for name, part in plain.items()}
    after = {name: {str(i) for i in part.rows.column("id")} for name, part in buffered.items()}
    assert all(after[name] <= before[name] for name in FRACTIONS)
    assert after["val"] == before["val"] and after["test"] == before["test"]
    assert after["train"] < before["train"]


def test_split_by_column_warns_when_the_stored_split_leaks(
    leaky: TacoDataset, tmp_path: Path
) -> None:
    with pytest.warns(TacoLeakageWarning, match="2 overlapping pair") as caught:
        parts = split_by_column(SampleDataset(leaky))
    assert "1 digest" in str(caught[0].message) and DUPLICATE[0] in str(caught[0].message)
    assert {name: len(part) for name, part in parts.items()} == {
        name: list(SPLITS.values()).count(name) for name in set(SPLITS.values())
    }
    clean = taco_gdal.load(str(write_leaky(tmp_path, only={"a", "c", "e", "k", "m"})[0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        split_by_column(SampleDataset(clean))
