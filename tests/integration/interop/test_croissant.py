"""Croissant export read back by the real mlcroissant: validation, records, references, hashes."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mlcroissant as mlc
import pandas as pd
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import taco_gdal
from taco_gdal.cli import cli
from taco_gdal.errors import TacoDependencyError, TacoQueryError
from tests.support.datasets import write_dataset

# mlcroissant 1.1.1 builds its graph with rdflib's deprecated ConjunctiveGraph, and reads
# records with reset_index(inplace=True), which pandas 3 deprecates
pytestmark = [
    pytest.mark.filterwarnings("ignore:ConjunctiveGraph is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:The inplace keyword in DataFrame.reset_index"),
]

MLCROISSANT = Path(sys.executable).parent / "mlcroissant"


@pytest.fixture(autouse=True)
def croissant_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """mlcroissant's download/extract cache in the test's folder, not in the home folder."""
    from mlcroissant._src.core import constants
    from mlcroissant._src.operation_graph.operations import extract

    cache = tmp_path / "croissant-cache"
    monkeypatch.setenv("CROISSANT_CACHE", str(cache))
    monkeypatch.setattr(constants, "DOWNLOAD_PATH", cache / "download")
    monkeypatch.setattr(extract, "EXTRACT_PATH", cache / "extract")
    yield cache


def _write(tmp_path: Path, shape: str, container: str) -> tuple[Path, Path]:
    dataset = write_dataset(tmp_path, shape, container)  # type: ignore[arg-type]
    out = tmp_path / "meta" / f"{shape}_{container}.json"
    out.parent.mkdir()
    result = CliRunner().invoke(cli, ["croissant", str(dataset), str(out)])
    assert result.exit_code == 0, result.output
    return dataset, out


def _expected(value: Any, kind: str) -> Any:
    """A ``.data`` value as mlcroissant gives it (sc:Text as bytes, arrays as lists)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if kind == "sc:Text" and isinstance(value, str):
        return value.encode()
    return None if value is None or pd.isna(value) else value


@pytest.mark.parametrize("container", ["zip", "folder"])
@pytest.mark.parametrize("shape", ["flat", "2level"])
def test_level0_records_equal_data(tmp_path: Path, shape: str, container: str) -> None:
    dataset, out = _write(tmp_path, shape, container)
    doc = json.loads(out.read_text())
    records = list(mlc.Dataset(jsonld=str(out)).records("level0"))
    data = taco_gdal.load(str(dataset)).data
    assert [r["level0/id"].decode() for r in records] == data["id"].tolist()
    fields = {f["name"]: f["dataType"] for f in doc["recordSet"][0]["field"]}
    shown = [c for c in data.columns if c in fields]
    assert {"id", "type", "split"} <= set(shown)
    for row, (_, expected) in zip(records, data.iterrows(), strict=True):
        for column in shown:
            got = row[f"level0/{column}"]
            want = _expected(expected[column], fields[column])
            if isinstance(got, pd.Timestamp):
                got = got.to_pydatetime()
                want = pd.Timestamp(want).to_pydatetime()
            assert got == want, (column, got, want)


@pytest.mark.parametrize("container", ["zip", "folder"])
def test_validates_and_links_levels(tmp_path: Path, container: str) -> None:
    dataset, out = _write(tmp_path, "2level", container)
    run = subprocess.run(
        [str(MLCROISSANT), "validate", "--jsonld", str(out)],
        capture_output=True,
        text=True,
        check=False,
        env={"CROISSANT_CACHE": str(tmp_path / "cli-cache"), "PATH": "/usr/bin:/bin"},
    )
    assert run.returncode == 0, run.stderr
    assert "error" not in run.stderr.lower().replace("0 error", "")
    croissant = mlc.Dataset(jsonld=str(out))
    parents = {
        r["level0/internal:current_id"]: r["level0/id"].decode()
        for r in croissant.records("level0")
    }
    children: dict[str, list[str]] = {}
    for r in croissant.records("level1"):
        children.setdefault(parents[r["level1/internal:parent_id"]], []).append(
            r["level1/id"].decode()
        )
    ds = taco_gdal.load(str(dataset))
    navigated = {tile: ds.read(tile)["id"].tolist() for tile in ds.data["id"]}
    assert children == navigated
    level1 = json.loads(out.read_text())["recordSet"][1]
    (parent,) = [f for f in level1["field"] if f["name"] == "internal:parent_id"]
    assert parent["references"] == {"field": {"@id": "level0/internal:current_id"}}


def test_zip_distribution_and_geo_properties(tmp_path: Path) -> None:
    dataset, out = _write(tmp_path, "flat", "zip")
    doc = json.loads(out.read_text())
    container, level0 = doc["distribution"]
    assert container["sha256"] == hashlib.sha256(dataset.read_bytes()).hexdigest()
    assert container["contentSize"] == f"{dataset.stat().st_size} B"
    assert (out.parent / container["contentUrl"]).resolve() == dataset.resolve()
    assert level0["containedIn"] == {"@id": container["@id"]}
    assert level0["contentUrl"] == "METADATA/level0.parquet"
    ds = taco_gdal.load(str(dataset))
    west, south, east, north = ds.extent["spatial"]
    assert doc["spatialCoverage"]["geo"]["box"] == f"{south} {west} {north} {east}"
    assert doc["temporalCoverage"] == "/".join(ds.extent["temporal"])
    assert doc["geocr:coordinateReferenceSystem"] == "EPSG:4326"
    assert doc["name"] == ds.id and doc["license"] == ds.licenses[0]


def test_fields_typed_from_arrow(tmp_path: Path) -> None:
    dataset, out = _write(tmp_path, "flat", "folder")
    doc = json.loads(out.read_text())
    schema = pq.read_schema(dataset / "METADATA" / "level0.parquet")
    fields = {f["name"]: f for f in doc["recordSet"][0]["field"]}
    assert set(fields) == set(schema.names)
    assert fields["cloud_cover"]["dataType"] == "sc:Float"
    assert fields["internal:current_id"]["dataType"] == "sc:Integer"
    assert fields["stac:time_start"]["dataType"] == "sc:DateTime"
    assert fields["stac:geotransform"]["isArray"] is True
    level0 = doc["distribution"][0]
    level0_file = dataset / "METADATA" / "level0.parquet"
    assert level0["sha256"] == hashlib.sha256(level0_file.read_bytes()).hexdigest()


def test_tampered_container_is_refused_by_mlcroissant(tmp_path: Path) -> None:
    dataset, out = _write(tmp_path, "flat", "zip")
    with dataset.open("r+b") as f:  # a byte of the COLLECTION.json member, which nothing reads
        f.seek(-30, 2)
        byte = f.read(1)
        f.seek(-30, 2)
        f.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(mlc.GenerationError) as refused:
        list(mlc.Dataset(jsonld=str(out)).records("level0"))
    assert "Hash of downloaded file" in str(refused.value.__cause__)


def test_refuses_views_and_other_containers(tmp_path: Path) -> None:
    ds = taco_gdal.load(str(write_dataset(tmp_path, "flat", "zip")))
    with pytest.raises(TacoQueryError, match="filtered view"):
        ds.sql("SELECT * FROM data WHERE split = 'train'").to_croissant()
    tacocat = taco_gdal.load(str(write_dataset(tmp_path, "flat", "tacocat")))
    with pytest.raises(TacoQueryError, match="'tacocat'"):
        tacocat.to_croissant()


def test_cli_refuses_existing_output_and_validates(tmp_path: Path) -> None:
    dataset, out = _write(tmp_path, "flat", "zip")
    again = CliRunner().invoke(cli, ["croissant", str(dataset), str(out)])
    assert again.exit_code == 2 and "--overwrite" in again.output
    checked = CliRunner().invoke(
        cli, ["croissant", str(dataset), str(out), "--overwrite", "--validate", "--json"]
    )
    assert checked.exit_code == 0, checked.output
    assert json.loads(checked.output) == {"written": [str(out)]}


def test_missing_extra_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from taco_gdal.read.interop.croissant import require_mlcroissant

    monkeypatch.setitem(sys.modules, "mlcroissant", None)  # what an absent package looks like
    with pytest.raises(TacoDependencyError, match=r"pip install 'taco_gdal\[croissant\]'"):
        require_mlcroissant()


def test_remote_container_is_described_by_its_url(tmp_path: Path) -> None:
    from tests.support.servers.range_server import RangeServer

    dataset = write_dataset(tmp_path, "flat", "zip")
    with RangeServer(root=dataset.parent) as server:
        url = f"{server.url}/{dataset.name}"
        ds = taco_gdal.load(url)
        doc = ds.to_croissant()
        container = doc["distribution"][0]
        assert container["contentUrl"] == url and doc["url"] == url
        assert container["sha256"] == hashlib.sha256(dataset.read_bytes()).hexdigest()
        out = tmp_path / "remote.json"
        out.write_text(json.dumps(doc))
        records = list(mlc.Dataset(jsonld=str(out)).records("level0"))  # fetched over HTTP
    assert [r["level0/id"].decode() for r in records] == ds.data["id"].tolist()
