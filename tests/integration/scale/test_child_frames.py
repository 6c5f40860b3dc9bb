"""Children frames built without ``Table.to_pandas`` equal ``to_frame``'s, on every kind of dataset.

:func:`taco_gdal.read.frames.dataframe.child_frame` builds a FOLDER's children from
per-level converters; ``to_frame`` of :func:`~taco_gdal.read.frames._children.children_table`
is the definition it must match: columns, order, dtypes, index, values,
geometry column and CRS, class and navigation context.  Compared with
``pandas.testing.assert_frame_equal`` for every FOLDER of every level, with
and without ``internal:*`` columns, on ZIP, FOLDER and TACOCAT containers
(ours and tacotoolbox's), with and without footprints, with nulls in integer,
boolean, time-zone and date columns, with padding, and after filters.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import geopandas as gpd
import numpy as np
import pyarrow as pa
import pytest
from pandas.testing import assert_frame_equal

import taco_gdal
from taco_gdal.format.names import FOLDER, GDAL_VSI, ID, INTERNAL_PREFIX, TYPE
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.read.frames._childframe import gdal_vsi_python, level_shape
from taco_gdal.read.frames._children import children_table
from taco_gdal.read.frames.dataframe import FrameContext, TacoDataFrame, child_frame, read, to_frame
from taco_gdal.read.frames.navigation import shows_internal
from taco_gdal.read.opening.containers.base import VsiRule
from taco_gdal.read.query.sql import gdal_vsi_arrow
from taco_gdal.write import create
from tests.support.datasets import make_geotiff, write_dataset

DAY_ONE = "2020-01-02/2020-01-02"  # child q1 of the benchmark cascade


def _nullable(root: Path) -> Path:
    """Two-level ZIP whose child ``a`` has int, bool, tz-aware, date and list values, ``b`` none.

    The level-1 columns hold nulls, so ``to_pandas`` picks dtypes by the rows taken.
    """
    root.mkdir(parents=True, exist_ok=True)

    def sample(index: int, name: str, **extra: object) -> Sample:
        path = root / f"s{index}.tif"
        metadata = make_geotiff(path, index)
        metadata.update(extra)
        return Sample(name, path, **metadata)

    roots = []
    for i in range(3):
        first = sample(
            10 * i,
            "a",
            count=i,
            flag=bool(i % 2),
            seen=dt.datetime(2024, 1, 1 + i, tzinfo=dt.UTC),
            day=dt.date(2024, 1, 1 + i),
            tags=["x", "y"][: i + 1],
        )
        children = Tortilla([first, sample(10 * i + 1, "b")], strict_schema=False)
        roots.append(Sample(f"r{i}", children))
    taco = Taco(
        Tortilla(roots),
        id="nullable",
        dataset_version="1.0.0",
        description="children with nulls",
        licenses=["CC-BY-4.0"],
        providers=[{"name": "taco_gdal tests"}],
        tasks=["classification"],
    )
    return create(taco, root / "nullable.tacozip", quiet=True)[0]


@pytest.fixture(scope="module")
def datasets(tmp_path_factory: pytest.TempPathFactory, cascade_zip: Path) -> dict[str, Path]:
    """Our writer's ZIP, FOLDER and TACOCAT (with footprints), nulls, and the benchmark cascade."""
    root = tmp_path_factory.mktemp("child_frames")
    out = {
        f"{shape}-{container}": write_dataset(root, shape, container)
        for shape in ("2level", "3level", "padded")
        for container in ("zip", "folder", "tacocat")
    }
    out["nullable-zip"] = _nullable(root / "nullable")
    out["cascade-zip"] = cascade_zip
    return out


def _folders(ds: taco_gdal.TacoDataset) -> Iterator[tuple[int, int]]:
    """(level, position) of every FOLDER row of the stored level tables."""
    base = ds.state.base
    for level in range(ds.max_depth):
        types = base.tables[level].column(TYPE).to_pylist()
        ids = base.tables[level].column(ID).to_pylist()
        for position, (kind, name) in enumerate(zip(types, ids, strict=True)):
            if kind == FOLDER and not str(name).startswith("__TACOPAD__"):
                yield level, position


def _expected(ds: taco_gdal.TacoDataset, level: int, parent: int, internal: bool) -> TacoDataFrame:
    state = ds.state
    table = children_table(state, level, parent, what="test")
    return to_frame(table, FrameContext(state, level), state.path, internal=internal)


def _assert_same(got: TacoDataFrame, expected: TacoDataFrame) -> None:
    assert type(got) is type(expected)
    assert_frame_equal(got, expected, check_exact=True)
    assert got._taco == expected._taco
    if isinstance(expected, gpd.GeoDataFrame):
        assert isinstance(got, gpd.GeoDataFrame)
        assert got.geometry.name == expected.geometry.name
        assert got.crs == expected.crs


def _compare(ds: taco_gdal.TacoDataset) -> int:
    compared = 0
    for level, parent in _folders(ds):
        for internal in (False, True):
            expected = _expected(ds, level + 1, parent, internal)
            got = child_frame(ds.state, level + 1, parent, internal=internal, what="test")
            _assert_same(got, expected)
            compared += len(got)
    return compared


@pytest.mark.parametrize(
    "name",
    [
        *(f"{s}-{c}" for s in ("2level", "3level", "padded") for c in ("zip", "folder", "tacocat")),
        "nullable-zip",
        "cascade-zip",
    ],
)
def test_child_frames_equal_to_frame(datasets: dict[str, Path], name: str) -> None:
    ds = taco_gdal.load(datasets[name])
    assert _compare(ds) > 0


def test_frames_of_a_dataset_with_footprints_are_geodataframes(datasets: dict[str, Path]) -> None:
    ds = taco_gdal.load(datasets["2level-zip"])
    children = ds.data.read(0)
    assert isinstance(children, gpd.GeoDataFrame)
    assert children.crs == "EPSG:4326" and children.geometry.name == "geometry"
    assert children[ID].tolist() == ["b02", "b03", "b04"]


def test_nullable_columns_take_the_dtype_of_the_rows_taken(datasets: dict[str, Path]) -> None:
    ds = taco_gdal.load(datasets["nullable-zip"])
    both = ds.data.read("r1")
    only_a = child_frame(ds.state, 1, 1, internal=False, what="test").iloc[:1]
    assert str(both["count"].dtype) == "float64"  # a null among the rows: as to_pandas does
    assert both["count"].tolist()[0] == 1.0 and np.isnan(both["count"].tolist()[1])
    assert both["seen"].dt.tz is not None
    assert only_a["tags"].iloc[0].tolist() == ["x", "y"]


def test_padding_rows_are_dropped(datasets: dict[str, Path]) -> None:
    ds = taco_gdal.load(datasets["padded-zip"])
    children = ds.data.read(0)
    assert children[ID].tolist() == ["b02", "b03", "b04"]


@pytest.mark.parametrize("name", ["2level-zip", "3level-tacocat", "padded-folder"])
def test_child_frames_equal_to_frame_after_filters(datasets: dict[str, Path], name: str) -> None:
    ds = taco_gdal.load(datasets[name])
    box = ds.filter_bbox(-3.70, 40.38, -3.45, 40.50, level=1)
    dated = ds.filter_datetime("2023-01-02/2023-01-30", level=1)
    for filtered in (box, dated):
        assert filtered.state.views.get(1) is not None
        _compare(filtered)


def test_cascade_after_a_level_filter(datasets: dict[str, Path]) -> None:
    ds = taco_gdal.load(datasets["cascade-zip"]).filter_datetime(DAY_ONE, level=1)
    assert _compare(ds) == 2 * 100  # q1 of each of the 100 FOLDERs, hidden and shown
    children = ds.data.read(42)
    assert children[ID].tolist() == ["q1"]
    assert children.index.tolist() == [42 * 4 + 1]


@pytest.mark.reference
def test_reference_written_datasets(tmp_path_factory: pytest.TempPathFactory) -> None:
    from tests.integration.read.conftest import write_reference

    root = tmp_path_factory.mktemp("child_frames_reference")
    for shape, fmt in (("2level", "zip"), ("3level", "folder"), ("3level", "tacocat")):
        ds = taco_gdal.load(write_reference(root, shape, fmt).path)
        assert _compare(ds) > 0


# --- issue 12: children frames follow .data -------------------------------------------


def _internal_columns(frame: TacoDataFrame) -> list[str]:
    return [str(c) for c in frame.columns if str(c).startswith(INTERNAL_PREFIX)]


@pytest.mark.parametrize("name", ["2level-zip", "3level-folder", "3level-tacocat"])
def test_children_hide_internal_columns_as_data_does(datasets: dict[str, Path], name: str) -> None:
    ds = taco_gdal.load(datasets[name])
    data = ds.data
    children = data.read(0)
    assert isinstance(children, TacoDataFrame)
    assert set(_internal_columns(children)) == set(_internal_columns(data))
    assert GDAL_VSI in children.columns
    assert children.index.name == "internal:current_id"
    assert not shows_internal(children)
    if ds.max_depth > 1:  # the index still navigates
        grandchildren = children.read("before")
        assert isinstance(grandchildren, TacoDataFrame)
        assert not shows_internal(grandchildren)
        assert grandchildren[ID].tolist() == ["rgb", "nir"]


@pytest.mark.parametrize("name", ["2level-zip", "3level-folder", "3level-tacocat"])
def test_internal_columns_on_request(datasets: dict[str, Path], name: str) -> None:
    ds = taco_gdal.load(datasets[name])
    full = ds.frame(internal=True)
    children = full.read(0)
    assert isinstance(children, TacoDataFrame)
    assert shows_internal(children)
    shown = set(_internal_columns(children))
    assert {"internal:current_id", "internal:parent_id", GDAL_VSI} <= shown
    assert children["internal:parent_id"].tolist() == [0] * len(children)
    asked = read(ds.data, 0, internal=True)
    assert isinstance(asked, TacoDataFrame)
    assert_frame_equal(asked, children)
    hidden = read(full, 0, internal=False)
    assert isinstance(hidden, TacoDataFrame)
    assert_frame_equal(hidden, ds.data.read(0))


def test_a_frame_without_ids_reads_meta_and_follows_the_same_rule(
    datasets: dict[str, Path],
) -> None:
    ds = taco_gdal.load(datasets["2level-zip"])
    query = f'SELECT "{ID}", "{TYPE}", "{GDAL_VSI}" FROM data'
    children = ds.sql(query).data.read(1)
    assert isinstance(children, TacoDataFrame)
    assert children[ID].tolist() == ["b02", "b03", "b04"]
    assert not shows_internal(children)
    assert children[GDAL_VSI].tolist() == ds.data.read(1)[GDAL_VSI].tolist()


# --- internal:gdal_vsi in Python, row for row as in Arrow -------------------------------


@pytest.mark.parametrize(
    ("rule", "table"),
    [
        (
            VsiRule("subfile", "/data/x.tacozip"),
            pa.table({"internal:offset": [10, None, 0], "internal:size": [5, 6, None]}),
        ),
        (
            VsiRule("source_file", "/data/cat/"),
            pa.table(
                {
                    "internal:offset": [1, 2, 3],
                    "internal:size": [4, 5, 6],
                    "internal:source_file": ["p0.tacozip", None, "p1.tacozip"],
                }
            ),
        ),
        (
            VsiRule("folder", "/data/ds/"),
            pa.table({"id": ["a/", "b", None, "d"], "type": ["FOLDER", "FILE", "FILE", None]}),
        ),
        (
            VsiRule("folder", "/data/ds"),
            pa.table(
                {
                    "id": ["a", "b"],
                    "type": ["FOLDER", "FILE"],
                    "internal:relative_path": ["x/a/", "x/b"],
                }
            ),
        ),
        (VsiRule("stored", ""), pa.table({GDAL_VSI: ["/vsimem/a", None]})),
    ],
    ids=["subfile", "source_file", "folder", "relative_path", "stored"],
)
def test_gdal_vsi_python_equals_arrow(rule: VsiRule, table: pa.Table) -> None:
    values = {name: table.column(name).to_pylist() for name in table.column_names}
    assert gdal_vsi_python(rule, values) == gdal_vsi_arrow(rule, table).to_pylist()


def test_level_shapes_are_built_once_per_load(datasets: dict[str, Path]) -> None:
    ds = taco_gdal.load(datasets["2level-zip"])
    first = level_shape(ds.state, 1, False)
    assert first is not None
    assert level_shape(ds.filter_datetime("2023", level=1).state, 1, False) is first
    assert level_shape(taco_gdal.load(datasets["2level-zip"]).state, 1, False) is not first
