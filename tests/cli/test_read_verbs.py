"""info, ls, sql, open through the installed ``taco``: outputs parsed, compared with the API."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pyarrow.parquet as pq
import pytest

import taco_gdal
from taco_gdal.cli.schema import SCHEMAS
from taco_gdal.format.names import GDAL_VSI, ID
from tests.cli.conftest import TACO, taco


@pytest.mark.parametrize("name", ["2level", "tacocat", "folder"])
def test_info_json_matches_the_api(datasets: dict[str, Path], name: str) -> None:
    info = taco("info", datasets[name]).json("info")  # JSON is the default
    ds = taco_gdal.load(datasets[name])
    assert info["id"] == ds.id and info["path"] == ds.path
    assert info["container"]["format"] == ds.format
    assert info["container"]["taco_version"] == "2.0.0"
    assert info["max_depth"] == ds.max_depth == 1
    assert [lv["samples"] for lv in info["levels"]] == [
        ds.to_arrow(k).num_rows for k in range(ds.max_depth + 1)
    ]
    assert info["levels"][1]["files"] == 9 and info["levels"][0]["folders"] == 3
    assert info["extent"] == ds.extent
    assert info["pit_schema"] == ds.pit_schema
    assert info["container"]["bytes"] > 0
    if name == "tacocat":
        parts = info["container"]["parts"]
        on_disk = sorted(str(p) for p in datasets[name].parent.glob("*.tacozip"))
        assert sorted(p["path"] for p in parts) == on_disk
        assert sum(p["samples"] for p in parts) == 3
        assert info["container"]["bytes"] == sum(Path(p).stat().st_size for p in on_disk)
    else:
        assert info["container"]["parts"] is None


def test_info_text(datasets: dict[str, Path]) -> None:
    out = taco("info", datasets["tacocat"], "--format", "text").out
    assert "level1:    9 samples (9 FILE, 0 FOLDER, 0 padding)" in out
    assert out.count("part:") == 2


def test_ls_json_and_table_match_the_api(datasets: dict[str, Path]) -> None:
    path = datasets["2level"]
    ds = taco_gdal.load(path)
    document = taco("ls", path, "--json").json("rows")
    assert document["columns"] == [ID, "type", GDAL_VSI]
    assert [r[GDAL_VSI] for r in document["rows"]] == list(ds.data[GDAL_VSI])
    table = taco("ls", path).out.splitlines()
    assert table[0].split() == [ID, "type", GDAL_VSI] and len(table) == 2 + 3
    assert all(line.split()[2] in set(ds.data[GDAL_VSI]) for line in table[2:])


def test_ls_nested_level_with_box_and_time_as_csv(datasets: dict[str, Path]) -> None:
    path = datasets["2level"]
    box, days = "-3.75,40.3,-3.5,40.46", "2023-01-01/2023-01-05"
    out = taco(
        "ls", path, "--level", "1", "--bbox", box, "--datetime", days,
        "--columns", "id,cloud_cover,internal:gdal_vsi", "--format", "csv",
    ).out  # fmt: skip
    rows = list(csv.DictReader(io.StringIO(out)))
    expected = (
        taco_gdal.load(path)
        .filter_bbox(-3.75, 40.3, -3.5, 40.46, level=1)
        .filter_datetime(days, level=1)
        .to_arrow(1)
    )
    assert [r[GDAL_VSI] for r in rows] == expected.column(GDAL_VSI).to_pylist()
    assert 0 < len(rows) < 9
    assert [float(r["cloud_cover"]) for r in rows] == expected.column("cloud_cover").to_pylist()


def test_ls_where_below_level0_as_jsonl_and_parquet(
    datasets: dict[str, Path], tmp_path: Path
) -> None:
    path = datasets["2level"]
    lines = taco("ls", path, "--level", "1", "--where", "id = 'b04'", "-f", "jsonl").out
    rows = [json.loads(line) for line in lines.splitlines()]
    for row in rows:
        jsonschema.validate(row, SCHEMAS["row"])
    ds = taco_gdal.load(path)
    b04 = [ds.read(k).read("b04") for k in range(3)]
    assert [r[GDAL_VSI] for r in rows] == b04
    target = tmp_path / "all.parquet"
    taco("ls", path, "--level", "1", "--columns", "all", "-f", "parquet", "-o", target)
    assert pq.read_table(target).equals(ds.to_arrow(1))


def test_sql_matches_the_api(datasets: dict[str, Path]) -> None:
    path = datasets["2level"]
    query = (
        'SELECT p.id AS tile, c.id AS band, c."internal:gdal_vsi" AS location FROM level1 c '
        'JOIN data p ON c."internal:parent_id" = p."internal:current_id" ORDER BY tile, band'
    )
    document = taco("sql", path, query, "--json").json("rows")
    expected = taco_gdal.load(path).sql(query).to_arrow(0).to_pylist()
    assert document["rows"] == expected and document["count"] == 9
    assert document["query"] == query


def test_open_prints_a_path_gdalinfo_opens(datasets: dict[str, Path]) -> None:
    path = datasets["3level"]
    location = taco("open", path, "scene001/before/nir").out.strip()
    ds = taco_gdal.load(path)
    assert location == ds.read("scene001").read("before").read("nir")
    info = subprocess.run(["gdalinfo", "-json", location], capture_output=True, text=True)
    assert info.returncode == 0 and json.loads(info.stdout)["size"] == [16, 16]
    document = taco("open", path, "1/0", "--json").json("open")  # positions work too
    assert document["location"] == ds.read(1).read(0) and document["type"] == "FILE"


def test_same_group_through_python_m_and_rio(datasets: dict[str, Path]) -> None:
    path = str(datasets["flat"])
    by_module = subprocess.run(
        [sys.executable, "-m", "taco_gdal", "open", path, "s001"], capture_output=True, text=True
    )
    assert by_module.returncode == 0
    assert by_module.stdout.strip() == taco_gdal.load(path).read("s001")
    rio = subprocess.run(
        [str(TACO.parent / "rio"), "taco", "--help"], capture_output=True, text=True
    )
    assert rio.returncode == 0 and "index" in rio.stdout and "verify" in rio.stdout


def test_every_verb_help_has_examples() -> None:
    from click.testing import CliRunner

    from taco_gdal.cli import VERBS, cli

    for verb in VERBS:  # in-process: eleven more subprocesses would only cost time
        result = CliRunner().invoke(cli, [verb, "--help"])
        assert result.exit_code == 0, result.output
        assert "Examples:" in result.output
        assert f"taco {verb} " in result.output.split("Examples:")[1]
        assert "--config" in result.output and "--debug" in result.output
        assert "Exit codes: 0 ok, 1 " in result.output
    top = taco("--help").out
    assert "Exit codes: 0 ok, 1" in top and all(verb in top for verb in VERBS)
