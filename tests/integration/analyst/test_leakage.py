"""check_splits and ``taco validate --splits`` on a dataset with a hand-made leaky split."""

from __future__ import annotations

import json
from pathlib import Path

import pyproj
import pytest
import shapely
from click.testing import CliRunner

import taco_gdal
from taco_gdal.cli import cli
from taco_gdal.errors import TacoQueryError
from tests.support.datasets import write_dataset
from tests.support.leaky import DUPLICATE, LEAKS, SPLITS, _layout, write_leaky


@pytest.fixture(scope="module")
def leaky(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    return write_leaky(tmp_path_factory.mktemp("leaky"))


@pytest.mark.parametrize("buffer_m", sorted(LEAKS))
def test_finds_every_planted_leak_and_nothing_else(
    leaky: tuple[Path, dict[str, str]], buffer_m: float
) -> None:
    path, digests = leaky
    report = taco_gdal.check_splits(taco_gdal.load(str(path)), "split", buffer_m=buffer_m)
    assert {frozenset(pair[:2]) for pair in report.overlaps} == LEAKS[buffer_m]
    assert len(report.overlaps) == len(LEAKS[buffer_m])
    for id_a, id_b, split_a, split_b in report.overlaps:
        assert (split_a, split_b) == (SPLITS[id_a], SPLITS[id_b]) and split_a != split_b
    assert report.duplicates == ((digests[DUPLICATE[0]], DUPLICATE),)
    assert digests[DUPLICATE[0]] == digests[DUPLICATE[1]]
    assert not report.ok and report.samples == len(SPLITS) and report.without_footprint == 0
    assert len(report.lines()) == len(LEAKS[buffer_m]) + 1


def _geodesic_gap(a: str, b: str) -> float:
    """Metres between a's east edge and b's west edge, at mid-height, along the ellipsoid."""
    layout = {sample_id: (crs, geom) for sample_id, _, crs, geom in _layout()}
    (crs, ga), (_, gb) = layout[a], layout[b]
    to_lonlat = pyproj.Transformer.from_crs(crs, "EPSG:4326", always_xy=True)
    y = (ga.bounds[1] + ga.bounds[3]) / 2
    lon1, lat1 = to_lonlat.transform(ga.bounds[2], y)
    lon2, lat2 = to_lonlat.transform(gb.bounds[0], y)
    return float(pyproj.Geod(ellps="WGS84").inv(lon1, lat1, lon2, lat2)[2])


def test_buffers_are_metres_at_the_antimeridian_and_at_85n(
    leaky: tuple[Path, dict[str, str]],
) -> None:
    ds = taco_gdal.load(str(leaky[0]))
    footprints = ds.data.set_index("id").geometry
    assert footprints["m"].geom_type == "MultiPolygon"  # cut at the antimeridian
    assert footprints["m"].intersects(footprints["n"])
    for a, b in (("n", "o"), ("p", "q"), ("q", "r")):  # n, o at 70N by 180; p, q, r at 85N
        gap = _geodesic_gap(a, b)
        short = taco_gdal.check_splits(ds, buffer_m=gap * 0.98)
        wide = taco_gdal.check_splits(ds, buffer_m=gap * 1.02)
        assert frozenset((a, b)) not in {frozenset(o[:2]) for o in short.overlaps}
        assert frozenset((a, b)) in {frozenset(o[:2]) for o in wide.overlaps}


def test_a_view_is_checked_with_its_own_columns(leaky: tuple[Path, dict[str, str]]) -> None:
    ds = taco_gdal.load(str(leaky[0]))
    view = ds.sql(
        "SELECT *, CASE WHEN id IN ('a', 'k') THEN 'left' ELSE 'right' END AS fold "
        "FROM data WHERE id IN ('a', 'b', 'c', 'd', 'k', 'l')"
    )
    report = taco_gdal.check_splits(view, "fold", buffer_m=100)
    assert {frozenset(o[:2]) for o in report.overlaps} == {frozenset("ab")}
    assert [ids for _, ids in report.duplicates] == [DUPLICATE]
    assert report.samples == 6
    clean = ds.sql("SELECT * FROM data WHERE id IN ('a', 'c', 'e', 'k')")
    assert taco_gdal.check_splits(clean, buffer_m=100).ok


def test_bad_requests_say_what_was_expected(
    leaky: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    ds = taco_gdal.load(str(leaky[0]))
    with pytest.raises(TacoQueryError, match="'fold'"):
        taco_gdal.check_splits(ds, "fold")
    with pytest.raises(TacoQueryError, match=">= 0"):
        taco_gdal.check_splits(ds, buffer_m=-1)
    with pytest.raises(TacoQueryError, match="null"):
        taco_gdal.check_splits(ds.sql("SELECT *, NULL AS fold FROM data"), "fold")
    folders = taco_gdal.load(str(write_dataset(tmp_path, "2level", "zip")))
    with pytest.raises(TacoQueryError, match="found neither"):
        taco_gdal.check_splits(folders)


def test_cli_prints_every_finding_and_exits_1(leaky: tuple[Path, dict[str, str]]) -> None:
    path = str(leaky[0])
    run = CliRunner().invoke(cli, ["validate", path, "--splits", "split", "--buffer", "100m"])
    assert run.exit_code == 1, run.output
    lines = [line for line in run.output.splitlines() if "SPLIT_" in line]
    assert len(lines) == len(LEAKS[100.0]) + 1
    for pair in LEAKS[100.0]:
        a, b = sorted(pair)
        assert any(f" {a} (" in line and f" {b} (" in line for line in lines), pair
    as_json = CliRunner().invoke(cli, ["validate", path, "--splits", "split", "--json"])
    assert as_json.exit_code == 1
    codes = [f["code"] for f in json.loads(as_json.output)["failures"]]
    assert sorted(codes) == ["SPLIT_DUPLICATE"] + ["SPLIT_OVERLAP"] * len(LEAKS[0.0])
    plain = CliRunner().invoke(cli, ["validate", path])
    assert plain.exit_code == 0, plain.output
    bad = CliRunner().invoke(cli, ["validate", path, "--splits", "split", "--buffer", "far"])
    assert bad.exit_code == 2 and "100m" in bad.output
    alone = CliRunner().invoke(cli, ["validate", path, "--buffer", "100m"])
    assert alone.exit_code == 2 and "--splits" in alone.output


def test_cli_exits_0_on_a_clean_split(tmp_path: Path) -> None:
    path, _ = write_leaky(tmp_path, only={"a", "c", "e", "g", "h", "k", "m", "p"})
    run = CliRunner().invoke(cli, ["validate", str(path), "--splits", "split", "--buffer", "1km"])
    assert run.exit_code == 0, run.output
    assert "OK" in run.output


def test_points_overlap_only_where_equal() -> None:
    from taco_gdal.read.leakage import find_leaks

    points = shapely.points([[0, 0], [0, 0], [0.001, 0]])
    report = find_leaks(["x", "y", "z"], ["a", "b", "c"], points, None)
    assert report.overlaps == (("x", "y", "a", "b"),)
    near = find_leaks(["x", "y", "z"], ["a", "b", "c"], points, None, buffer_m=120)
    assert {frozenset(o[:2]) for o in near.overlaps} == {
        frozenset("xy"),
        frozenset("xz"),
        frozenset("yz"),
    }
