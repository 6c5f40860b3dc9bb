"""STAC export streams its rows: the same Items in any batch size, memory that follows the batch.

Rows a filter kept come from the loaded tables a batch at a time; any other view
(``sql()``) is spooled by DuckDB to a Parquet file and read back in batches; the
FILE children of FOLDER samples are spooled sorted by parent and matched to each
batch of parents (a view that reorders the parents still gets each its own).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import taco_gdal
from taco_gdal.read.interop.stac import item_batches
from taco_gdal.read.interop.stac_rows import level_batches
from tests.support.datasets import write_dataset


def _items(ds: taco_gdal.TacoDataset, batch: int, level: int = 0) -> list[dict[str, object]]:
    return [item for part in item_batches(ds.state, level, batch=batch) for item in part]


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_dataset(tmp_path_factory.mktemp("stream"), "2level", "zip", n=7)


@pytest.mark.parametrize("container", ["folder", "tacocat"])
def test_other_containers_in_batches_equal_one_batch(tmp_path: Path, container: str) -> None:
    ds = taco_gdal.load(write_dataset(tmp_path, "2level", container, n=5))  # type: ignore[arg-type]
    for view in (
        ds,
        ds.sql("SELECT * FROM data ORDER BY id DESC"),
        ds.filter_bbox(-4, 40, -3, 41, level=1),
    ):
        whole = _items(view, batch=10_000)
        assert len(whole) == len(view.data) > 0
        assert _items(view, batch=2) == whole
        assert all(len(item["assets"]) >= 1 for item in whole)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "view",
    [
        "plain",
        "SELECT * FROM data ORDER BY id DESC",
        "SELECT * FROM data WHERE id <> 'tile003'",
    ],
)
@pytest.mark.parametrize("batch", [1, 2, 3])
def test_folder_items_in_batches_equal_one_batch(folders: Path, view: str, batch: int) -> None:
    ds = taco_gdal.load(folders)
    ds = ds if view == "plain" else ds.sql(view)
    whole = _items(ds, batch=10_000)
    assert [item["id"] for item in _items(ds, batch)] == [item["id"] for item in whole]
    assert _items(ds, batch) == whole
    assert all(sorted(item["assets"]) == ["b02", "b03", "b04"] for item in whole)  # type: ignore[call-overload]
    if view == "plain":
        assert [i["id"] for i in whole] == [f"tile{k:03d}" for k in range(7)]
    elif "DESC" in view:
        assert [i["id"] for i in whole] == [f"tile{k:03d}" for k in reversed(range(7))]


def test_level_one_items_through_the_duckdb_spool(folders: Path) -> None:
    ds = taco_gdal.load(folders)
    expected = ds.to_arrow(1).to_pylist()
    items = _items(ds, batch=4, level=1)
    assert items == _items(ds, batch=10_000, level=1)
    assert len(items) == len(expected) > 4
    assert [i["id"].split("/")[1] for i in items] == [r["id"] for r in expected]  # type: ignore[union-attr]


def _peak_arrow_growth(ds: taco_gdal.TacoDataset, batch: int) -> int:
    """The most Arrow memory held at once beyond what the loaded dataset holds."""
    before = pa.total_allocated_bytes()
    peak = 0
    for table in level_batches(ds.state, 0, batch, "test"):
        peak = max(peak, pa.total_allocated_bytes() - before)
        assert table.num_rows <= batch
    return peak


@pytest.mark.parametrize("view", ["filters", "sql"])
def test_arrow_memory_follows_the_batch_not_the_level(tmp_path: Path, view: str) -> None:
    small = taco_gdal.load(write_dataset(tmp_path / "small", "flat", "zip", n=200))
    large = taco_gdal.load(write_dataset(tmp_path / "large", "flat", "zip", n=2000))
    if view == "filters":
        small, large = (
            small.filter_bbox(-180, -90, 180, 90),
            large.filter_bbox(-180, -90, 180, 90),
        )
    else:
        small, large = small.sql("SELECT * FROM data"), large.sql("SELECT * FROM data")
    growth_small, growth_large = _peak_arrow_growth(small, 50), _peak_arrow_growth(large, 50)
    assert sum(t.num_rows for t in level_batches(large.state, 0, 50, "test")) == 2000
    # ten times the rows, the same batch: the same memory (a level copy would be ten times)
    assert growth_large < 2 * growth_small + 64 * 1024, (growth_small, growth_large)


def test_the_public_geoparquet_writer_gives_the_same_items(folders: Path, tmp_path: Path) -> None:
    """The fallback for a stac-geoparquet release whose batch class moved: its public
    ``parse_stac_items_to_parquet`` writes what the batch path writes."""
    import pyarrow.parquet as pq
    from stac_geoparquet.arrow import stac_table_to_items

    from taco_gdal.read.interop.stac_files import _write_geoparquet, _write_geoparquet_public

    ds = taco_gdal.load(folders).sql("SELECT * FROM data WHERE id <> 'tile002'")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    fast, count = _write_geoparquet(ds.state, tmp_path / "a", 0, "gdal", 2)
    public, public_count = _write_geoparquet_public(ds.state, tmp_path / "b", 0, "gdal", 2)
    assert count == public_count == 6
    assert list(stac_table_to_items(pq.read_table(fast))) == list(
        stac_table_to_items(pq.read_table(public))
    )
    assert (
        pq.read_metadata(public).metadata[b"stac-geoparquet"]
        == (pq.read_metadata(fast).metadata[b"stac-geoparquet"])
    )
