"""sql(): lazy, chainable, `data` bound to the current view, level tables by name."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import taco_gdal.read as reader
from taco_gdal.errors import TacoQueryError
from tests.integration.read.conftest import RefDataset


def test_chained_queries(ref: RefDataset) -> None:
    ds = reader.load(ref.path)
    first = ds.sql("SELECT * FROM data WHERE score >= 1")
    second = first.sql("SELECT * FROM data ORDER BY score DESC")
    expected = sorted(
        (n for n in ref.level(0) if n.position[-1] >= 1), key=lambda n: -n.position[-1]
    )
    assert second.data["id"].tolist() == [n.id for n in expected]
    assert first.data["id"].tolist() == [n.id for n in ref.level(0)[1:]]
    assert ds.data["id"].tolist() == [n.id for n in ref.level(0)]


def test_queries_are_lazy(reference: Callable[[str, str], RefDataset]) -> None:
    ds = reader.load(reference("flat", "zip").path)
    lazy = ds.sql("SELECT *, error('ran too early') AS boom FROM data")  # binds, does not run
    with pytest.raises(TacoQueryError, match="ran too early"):
        _ = lazy.data


def test_user_with_clause_semicolon_and_order(reference: Callable[[str, str], RefDataset]) -> None:
    ds = reader.load(reference("flat", "folder").path)
    query = "WITH big AS (SELECT * FROM data WHERE score > 2) SELECT * FROM big ORDER BY id DESC;"
    assert ds.sql(query).data["id"].tolist() == ["s4", "s3"]


def test_unknown_column_fails_at_sql_time_naming_the_file(
    reference: Callable[[str, str], RefDataset],
) -> None:
    ref = reference("2level", "zip")
    ds = reader.load(ref.path)
    with pytest.raises(TacoQueryError) as info:
        ds.sql("SELECT * FROM data WHERE cloudiness < 3")
    assert str(ref.path) in str(info.value) and "cloudiness" in str(info.value)


def test_level_tables_for_cross_level_queries(reference: Callable[[str, str], RefDataset]) -> None:
    ref = reference("3level", "tacocat")
    ds = reader.load(ref.path)
    bands = ds.sql(
        'SELECT b.id, b."internal:gdal_vsi", r.id AS region FROM level2 b '
        'JOIN level1 s ON b."internal:parent_id" = s."internal:current_id" '
        'JOIN level0 r ON s."internal:parent_id" = r."internal:current_id" '
        "WHERE s.id = 's2' ORDER BY b.\"internal:current_id\""
    ).data
    assert len(bands) == 6  # 2 regions x 3 bands, each band once
    assert bands["region"].tolist() == ["region0"] * 3 + ["region1"] * 3
    for vsi, region in zip(bands["internal:gdal_vsi"], bands["region"], strict=True):
        assert vsi.startswith("/vsisubfile/")
        index = int(region[-1])
        assert vsi.endswith(f"part{index + 1:04d}.tacozip")


def test_result_without_navigation_columns(reference: Callable[[str, str], RefDataset]) -> None:
    ds = reader.load(reference("flat", "zip").path)
    counts = ds.sql("SELECT type, count(*) AS n FROM data GROUP BY type").data
    assert counts["n"].tolist() == [5]
    with pytest.raises(TacoQueryError, match="needs columns"):
        counts.read(0)


def test_columns_binds_without_running(reference: Callable[[str, str], RefDataset]) -> None:
    ds = reader.load(reference("flat", "zip").path)
    assert ds.sql("SELECT id, score FROM data").columns == ["id", "score"]
