"""filter_bbox / filter_datetime at every level, cascades, compounding, exact times."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import taco_gdal.read as reader
from taco_gdal.errors import TacoQueryError, TacoWarning
from taco_gdal.read import TacoDataFrame, TacoDataset
from tests.integration.read.conftest import Node, RefDataset

Predicate = Callable[[Node], bool]


def _descendants(node: Node, level: int) -> list[Node]:
    if node.level == level:
        return [node]
    return [d for child in node.children for d in _descendants(child, level)]


def _check(ds: TacoDataset, ref: RefDataset, level: int, keep: Predicate) -> None:
    """Level 0 holds the roots with a matching descendant; read() shows only survivors."""
    expected = [root for root in ref.tree if any(keep(d) for d in _descendants(root, level))]
    frame = ds.data
    assert frame["id"].tolist() == [n.id for n in expected]
    _check_children(frame, expected, level, keep)


def _check_children(frame: TacoDataFrame, nodes: list[Node], level: int, keep: Predicate) -> None:
    for position, node in enumerate(nodes):
        if node.type == "FILE":
            continue
        if node.level + 1 < level:
            survivors = [c for c in node.children if any(keep(d) for d in _descendants(c, level))]
        elif node.level + 1 == level:
            survivors = [c for c in node.children if keep(c)]
        else:
            survivors = list(node.children)
        children = frame.read(position)
        assert isinstance(children, TacoDataFrame)
        assert children["id"].tolist() == [c.id for c in survivors]
        _check_children(children, survivors, level, keep)


def _box_around(node: Node) -> tuple[float, float, float, float]:
    x, y = node.centroid
    return x - 0.1, y - 0.1, x + 0.1, y + 0.1


def test_bbox_single_sample_at_every_level(ref: RefDataset) -> None:
    ds = reader.load(ref.path)
    for level in range(ref.depth + 1):
        target = ref.level(level)[len(ref.level(level)) // 2]
        filtered = ds.filter_bbox(*_box_around(target), level=level)
        _check(filtered, ref, level, lambda n, t=target: n.position == t.position)


def test_bbox_wide_box_at_every_level(ref: RefDataset) -> None:
    ds = reader.load(ref.path)
    for level in range(ref.depth + 1):
        filtered = ds.filter_bbox(20.0, -90.0, 43.0, 90.0, level=level)
        _check(filtered, ref, level, lambda n: 20.0 <= n.centroid[0] <= 43.0)


def test_bbox_no_match(ref: RefDataset) -> None:
    ds = reader.load(ref.path)
    for level in range(ref.depth + 1):
        with pytest.warns(TacoWarning, match="does not intersect the dataset's"):
            assert len(ds.filter_bbox(-170, -80, -160, -70, level=level).data) == 0


def test_bbox_explicit_column_and_boundary_is_inclusive(
    reference: Callable[[str, str], RefDataset],
) -> None:
    ref = reference("flat", "zip")
    ds = reader.load(ref.path)
    x, y = ref.level(0)[1].centroid
    exact = ds.filter_bbox(x, y, x + 1, y + 1, geometry_col="stac:centroid")
    assert exact.data["id"].tolist() == [ref.level(0)[1].id]


def test_bbox_across_the_antimeridian(reference: Callable[[str, str], RefDataset]) -> None:
    ref = reference("flat", "zip")
    ds = reader.load(ref.path)
    # [170, 180] and [-180, 21]: centroids at lon 0.4 and 20.4 are inside, 40.4.. are not
    crossing = ds.filter_bbox(170, -90, 21, 90)
    assert crossing.data["id"].tolist() == [n.id for n in ref.level(0)[:2]]
    reshaped = ds.sql("SELECT * FROM data")  # a view sql() made: rows through DuckDB
    assert reshaped.filter_bbox(170, -90, 21, 90).data["id"].tolist() == ["s0", "s1"]


def test_datetime_exact_instant_at_every_level(ref: RefDataset) -> None:
    ds = reader.load(ref.path)
    for level in range(ref.depth + 1):
        target = ref.level(level)[-1]
        by_object = ds.filter_datetime(target.time, level=level)
        _check(by_object, ref, level, lambda n, t=target: n.time == t.time)
        text = target.time.isoformat() + "Z"
        by_string = ds.filter_datetime(text, level=level)
        assert by_string.data["id"].tolist() == by_object.data["id"].tolist()


def test_datetime_is_exact_to_the_microsecond(ref: RefDataset) -> None:
    ds = reader.load(ref.path)
    level = ref.depth
    target = ref.level(level)[1]
    before = target.time - timedelta(microseconds=1)
    upto = ds.filter_datetime((datetime(2000, 1, 1), before), level=level)
    _check(upto, ref, level, lambda n: n.time <= before)
    after = ds.filter_datetime(f"{target.time.isoformat()}/..", level=level)
    _check(after, ref, level, lambda n: n.time >= target.time)


def test_datetime_forms(reference: Callable[[str, str], RefDataset]) -> None:
    ref = reference("flat", "folder")
    ds = reader.load(ref.path)
    ids = [n.id for n in ref.level(0)]
    assert ds.filter_datetime("2023-01-02/2023-01-03").data["id"].tolist() == ids[1:3]
    assert ds.filter_datetime("2023-01-02").data["id"].tolist() == ids[1:2]
    assert ds.filter_datetime(date(2023, 1, 4)).data["id"].tolist() == ids[3:4]
    aware = datetime(2023, 1, 3, 1, 0, tzinfo=UTC).astimezone()  # same instant, local zone
    assert ds.filter_datetime((aware - timedelta(hours=1), None)).data["id"].tolist() == ids[2:]
    assert ds.filter_datetime(("..", "2023-01-01")).data["id"].tolist() == ids[:1]
    assert ds.filter_datetime(np.datetime64("2023-01-05T00:00:00")).data["id"].tolist() == ids[4:]
    assert len(ds.filter_datetime("2024-01-01/2024-12-31").data) == 0


def test_cascade_filters_compound_at_every_level(
    reference: Callable[[str, str], RefDataset],
) -> None:
    ref = reference("3level", "zip")
    ds = reader.load(ref.path)
    first = ds.filter_bbox(0, -90, 100, 90, level=2)  # every band
    second = first.filter_datetime("2023-01-01T01:00:00/2023-01-02T00:59:00", level=2)
    third = second.filter_bbox(20, -90, 26, 90, level=1)  # region1/s1 and /s2 (lon 20.4, 25.4)

    def keep(n: Node) -> bool:
        start, end = datetime(2023, 1, 1, 1), datetime(2023, 1, 2, 0, 59)
        return start <= n.time <= end

    assert second.data["id"].tolist() == ["region0", "region1"]
    _check(second, ref, 2, keep)
    region = third.data
    assert region["id"].tolist() == ["region1"]
    sensors = region.read(0)
    assert sensors["id"].tolist() == ["s1"]  # region1/s2 has no band left after `second`
    assert sensors.read(0)["id"].tolist() == ["b0", "b1", "b2"]


def test_filter_then_sql_then_filter(reference: Callable[[str, str], RefDataset]) -> None:
    ref = reference("2level", "tacocat")
    ds = reader.load(ref.path)
    chained = (
        ds.filter_bbox(0, -90, 30, 90, level=1)
        .sql("SELECT * FROM data WHERE id <> 'tile0'")
        .filter_datetime("2023-01-02/2023-01-02", level=0)
    )
    frame = chained.data
    assert frame["id"].tolist() == ["tile1"]
    assert frame.read(0)["id"].tolist() == ["a", "b"]


def test_filter_errors(reference: Callable[[str, str], RefDataset]) -> None:
    ds = reader.load(reference("2level", "zip").path)
    with pytest.raises(TacoQueryError, match="'nope' not found at level 0"):
        ds.filter_bbox(0, 0, 1, 1, geometry_col="nope")
    with pytest.raises(TacoQueryError, match="has type VARCHAR"):
        ds.filter_bbox(0, 0, 1, 1, geometry_col="id")
    with pytest.raises(TacoQueryError, match=r"level must be 0\.\.1"):
        ds.filter_bbox(0, 0, 1, 1, level=2)
    with pytest.raises(TacoQueryError, match="miny 2 > maxy 1"):
        ds.filter_bbox(0, 2, 1, 1)
    with pytest.raises(TacoQueryError, match="not an ISO 8601"):
        ds.filter_datetime("yesterday/today")
    with pytest.raises(TacoQueryError, match="open at both ends"):
        ds.filter_datetime("../..")
    # the message quotes the bounds as typed (not the day after the end)
    with pytest.raises(TacoQueryError, match="start '2023-02-01' after end '2023-01-01' in"):
        ds.filter_datetime("2023-02-01/2023-01-01")
    bare = ds.sql("SELECT id, type FROM data")
    with pytest.raises(TacoQueryError, match="expected footprints at level 0") as refused:
        bare.filter_bbox(0, 0, 1, 1)
    assert "samples_from_rasters()" in str(refused.value)  # says how to add footprints
    assert "istac:geometry" in str(refused.value)
    with pytest.raises(TacoQueryError, match="internal:current_id"):
        bare.filter_datetime("2023-01-01", level=1)


def test_to_arrow_follows_the_current_state(reference: Callable[[str, str], RefDataset]) -> None:
    ref = reference("3level", "tacocat")
    ds = reader.load(ref.path)
    target = ref.level(2)[4]  # region0/s2/b1
    x, y = target.centroid
    narrowed = ds.filter_bbox(x - 0.1, y - 0.1, x + 0.1, y + 0.1, level=2)
    assert narrowed.to_arrow(0).column("id").to_pylist() == ["region0"]
    assert narrowed.to_arrow(1).column("id").to_pylist() == ["s2"]
    assert narrowed.to_arrow(2).column("id").to_pylist() == ["b1"]
    assert not [c for c in narrowed.to_arrow(2).column_names if c.startswith("__taco")]
    assert ds.sql("SELECT * FROM data WHERE id = 'region1'").to_arrow(2).num_rows == 6
    with pytest.raises(TacoQueryError, match=r"level must be 0\.\.2"):
        ds.to_arrow(3)
    with pytest.raises(TacoQueryError, match="internal:current_id"):
        ds.sql("SELECT id FROM data").to_arrow(1)


@pytest.mark.parametrize("kind", ["tz", "date"])
def test_datetime_on_zoned_and_date_columns(
    reference: Callable[[str, str], RefDataset], tmp_path: Path, kind: str
) -> None:
    ref = reference("flat", "folder")
    folder = tmp_path / "copy"
    shutil.copytree(ref.path, folder)
    path = folder / "METADATA" / "level0.parquet"
    table = pq.read_table(path)
    index = table.column_names.index("stac:time_start")
    wanted = pa.timestamp("us", tz="UTC") if kind == "tz" else pa.date32()
    pq.write_table(
        table.set_column(index, "stac:time_start", table.column(index).cast(wanted)), path
    )
    ds = reader.load(folder)
    ids = [n.id for n in ref.level(0)]
    assert ds.filter_datetime("2023-01-02/2023-01-03").data["id"].tolist() == ids[1:3]
    if kind == "tz":
        instant = ref.level(0)[3].time.replace(tzinfo=UTC)
        assert ds.filter_datetime(instant).data["id"].tolist() == ids[3:4]
