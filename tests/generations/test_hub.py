"""Requirement 4: hf:// URLs to pinned GDAL paths; tacofoundation: ids and v1 names explained."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

import taco_gdal
from taco_gdal.errors import TacoFormatError, TacoValidationError, TacoWarning
from taco_gdal.format.names import ID
from taco_gdal.read.opening.hub import hf_endpoint, parse_hf, resolve_location
from tests.generations.conftest import golden
from tests.support.servers.range_server import RangeServer

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(autouse=True)
def _no_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("TACO_GDAL_HF_ENDPOINT", "HF_ENDPOINT"):
        monkeypatch.delenv(variable, raising=False)


def test_commit_revision_maps_to_a_pinned_resolve_url() -> None:
    url = f"hf://datasets/tacofoundation/cloudsen12@{COMMIT}/parts/l1c.0000.part.tacozip"
    assert resolve_location(url) == (
        "/vsicurl/https://huggingface.co/datasets/tacofoundation/cloudsen12/resolve/"
        f"{COMMIT}/parts/l1c.0000.part.tacozip"
    )
    assert parse_hf(url).pinned


def test_branch_revision_defaults_to_main_and_warns() -> None:
    with pytest.warns(TacoWarning, match="branch, which moves.*Pin a commit"):
        path = resolve_location("hf://datasets/org/data/x.zip")
    assert path == "/vsicurl/https://huggingface.co/datasets/org/data/resolve/main/x.zip"
    with pytest.warns(TacoWarning):
        tagged = resolve_location("hf://datasets/org/data@refs/pr/1/x.zip")
    assert "/resolve/refs/pr/1/x.zip" in tagged  # '@refs' then the file 'pr/1/x.zip'


def test_endpoint_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", "https://mirror.example/")
    assert hf_endpoint() == "https://mirror.example"
    monkeypatch.setenv("TACO_GDAL_HF_ENDPOINT", "http://127.0.0.1:1")
    assert hf_endpoint() == "http://127.0.0.1:1"


@pytest.mark.parametrize(
    "url",
    [
        "hf://datasets/org/data",
        "hf://datasets/org//x.zip",
        "hf://datasets/o rg/d/x",
        "hf://models/a/b/c",
    ],
)
def test_malformed_urls_are_refused(url: str) -> None:
    with pytest.raises(TacoValidationError, match=r"expected"):
        parse_hf(url)


def test_hf_url_reads_over_a_local_range_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, taco_eo_view: dict[str, Any]
) -> None:
    change = taco_eo_view["v3_nested.zip"]["samples"][0]["files"]["change.tif"]
    folder = tmp_path / "datasets" / "tacofoundation" / "demo" / "resolve" / COMMIT
    folder.mkdir(parents=True)
    shutil.copy(golden("v3/v3_nested.zip"), folder / "demo.zip")
    with RangeServer(root=tmp_path) as server:
        monkeypatch.setenv("TACO_GDAL_HF_ENDPOINT", server.url)
        ds = taco_gdal.load(f"hf://datasets/tacofoundation/demo@{COMMIT}/demo.zip")
        assert ds.format == "taco3"
        assert list(ds.data[ID]) == ["pair_0", "pair_1", "pair_2"]
        child = ds.read("pair_0")
        assert isinstance(child, taco_gdal.TacoDataFrame)
        path = str(child["internal:gdal_vsi"].iloc[2])
        assert path.startswith(
            f"/vsisubfile/{change['offset']}_{change['size']},/vsicurl/{server.url}/datasets/"
        )
        assert server.log.count(f"/datasets/tacofoundation/demo/resolve/{COMMIT}/demo.zip") >= 1


def test_tacofoundation_ids_say_how_to_open_them() -> None:
    with pytest.raises(
        TacoValidationError, match="hf://datasets/tacofoundation/cloudsen12@<commit>"
    ):
        taco_gdal.load("tacofoundation:cloudsen12")


def test_legacy_name_that_is_not_v1_is_explained(tmp_path: Path) -> None:
    target = tmp_path / "old.tortilla"
    target.write_bytes(b"not a tortilla" * 30)
    with pytest.raises(TacoFormatError, match=r"TACO v1 name .* magic b'WX'"):
        taco_gdal.load(target)
