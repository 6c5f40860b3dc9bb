"""Requirement 3: v1 -> v2 and v3 -> v2 by byte copy, every payload identical, losses reported."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from click.testing import CliRunner

import taco_gdal
from taco_gdal.format.names import FILE, GDAL_VSI, ID, PARENT_ID, TYPE
from taco_gdal.io.vsi import read_all
from tests.generations.conftest import golden

SOURCES = [
    "v1/v1_flat.taco",
    "v1/v1_flat.tortilla",
    "v1/v1_nested.taco",
    "v3/v3_flat.zip",
    "v3/v3_nested.zip",
    "v3/v3_sequence.zip",
    "v3/v3_tacocat",
    "v3/cozip_flat.zip",
]


def _keyed(ds: taco_gdal.TacoDataset) -> dict[tuple[str, ...], dict[str, Any]]:
    """Every row of every level keyed by the ids from its root down."""
    out: dict[tuple[str, ...], dict[str, Any]] = {}
    previous: list[tuple[str, ...]] = []
    for level in range(ds.max_depth + 1):
        rows = ds.to_arrow(level).to_pylist()
        keys = []
        for row in rows:
            parent = () if level == 0 else previous[row[PARENT_ID]]
            key = (*parent, str(row[ID]))
            out[key] = row
            keys.append(key)
        previous = keys
    return out


def _user_value(value: Any) -> Any:
    if isinstance(value, pa.Scalar):
        return value.as_py()
    return value


@pytest.mark.parametrize("name", SOURCES)
def test_every_payload_is_byte_identical_and_metadata_carried(name: str, tmp_path: Path) -> None:
    source = golden(name)
    report = taco_gdal.convert(source, tmp_path / "out.tacozip", quiet=True)
    before, after = taco_gdal.load(source), taco_gdal.load(report.output)
    assert after.format == "zip"
    old, new = _keyed(before), _keyed(after)
    assert list(old) == list(new)
    copied = 0
    for key, row in old.items():
        converted = new[key]
        assert converted[TYPE] == row[TYPE]
        for column, value in row.items():
            if not column.startswith("internal:"):
                assert _user_value(converted[column]) == _user_value(value), (key, column)
        if row[TYPE] == FILE:
            assert read_all(converted[GDAL_VSI]) == read_all(row[GDAL_VSI]), key
            copied += 1
    assert copied == report.files and report.files > 0
    assert report.samples == [before.to_arrow(k).num_rows for k in range(before.max_depth + 1)]
    for key in ("id", "description", "licenses"):
        assert after.collection[key] == before.collection[key]


def test_losses_are_listed_and_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="taco_gdal.generations"):
        report = taco_gdal.convert(golden("v3/v3_sequence.zip"), tmp_path / "s.tacozip", quiet=True)
    assert not report.ok
    assert any("variable leaves ['img*[1,4].tif']" in item for item in report.not_carried)
    assert len(caplog.records) == len(report.not_carried)
    v1 = taco_gdal.convert(golden("v1/v1_nested.taco"), tmp_path / "n.tacozip", quiet=True)
    assert any(item.startswith("tortilla:offset") for item in v1.not_carried)
    assert any("embedded tortillas" in item for item in v1.not_carried)


@pytest.mark.reference
@pytest.mark.filterwarnings("ignore:fetch_arrow_table\\(\\) is deprecated:DeprecationWarning")
def test_reference_reader_opens_converted_files(tmp_path: Path) -> None:
    import tacoreader

    from tests.conformance import _env

    _env.install_spatial_extension()

    for name, parent, children in [
        ("v3/v3_nested.zip", 1, ["before", "after", "change.tif"]),
        ("v1/v1_nested.taco", 0, ["band_0", "band_1", "band_2"]),
    ]:
        out = taco_gdal.convert(golden(name), tmp_path / f"{parent}.tacozip", quiet=True).output
        dataset = tacoreader.load(str(out))
        assert dataset.data.read(parent)["id"].to_pylist() == children


def test_taco_convert_command(tmp_path: Path) -> None:
    from taco_gdal.cli import cli

    result = CliRunner().invoke(
        cli, ["convert", str(golden("v1/v1_flat.taco")), str(tmp_path / "c.tacozip")]
    )
    assert result.exit_code == 0, result.output
    assert taco_gdal.load(tmp_path / "c.tacozip").to_arrow(0).num_rows == 3
