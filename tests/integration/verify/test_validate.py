"""validate(): the reference fixtures pass; 20 hand-broken variants each get the right code."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import taco_gdal
from taco_gdal.read.opening.containers import registry
from taco_gdal.read.opening.containers.base import Probe
from taco_gdal.verify import codes
from taco_gdal.verify._rows import Collector
from taco_gdal.verify._validate import _check_extent, _legacy_tacocat
from tests.support.datasets import write_dataset

GOLDEN = Path(__file__).resolve().parents[2] / "conformance" / "golden"


def _golden_datasets() -> list[Path]:
    manifest = json.loads((GOLDEN / "manifest.json").read_text())
    del manifest
    found = []
    for entry in sorted(GOLDEN.iterdir()):
        if not entry.is_dir():
            continue
        for child in sorted(entry.iterdir()):
            if child.name.endswith("part0002.tacozip"):
                continue
            found.append(child)
    return found


@pytest.mark.parametrize("path", _golden_datasets(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_reference_fixtures_validate(path: Path) -> None:
    report = taco_gdal.validate(path)
    assert report.ok, str(report)
    if path.parent.name == "v0180_two_bincat" and path.name == "__TACOCAT__":
        # tacotoolbox 0.18.0 copied part 1's extent into the consolidated COLLECTION:
        # the rows of part 2 lie outside it; validate says so, as a warning.
        assert {w.code for w in report.warnings} == {codes.EXTENT}, str(report)
        assert "warning" in str(report) and report.to_dict()["ok"] is True
    else:
        assert not report.failures, str(report)


def test_the_legacy_extent_defect_is_an_error_in_a_current_tacocat(tmp_path: Path) -> None:
    legacy = GOLDEN / "v0180_two_bincat" / "__TACOCAT__"
    probe = Probe(str(legacy), str(legacy))
    opened = registry.detect(probe).open(probe)
    assert _legacy_tacocat("tacocat", list(opened.levels))
    out = Collector()
    _check_extent(opened.collection, list(opened.levels), out, legacy=False)
    assert {f.severity for f in out.failures} == {"error"} and len(out.failures) == 2
    current = write_dataset(tmp_path, "2level", "tacocat")
    probe = Probe(str(current), str(current))
    assert not _legacy_tacocat("tacocat", list(registry.detect(probe).open(probe).levels))


Edit = Callable[[Path], None]


def _collection(change: Callable[[dict[str, Any]], None]) -> Edit:
    def edit(root: Path) -> None:
        path = root / "COLLECTION.json"
        value = json.loads(path.read_text())
        change(value)
        path.write_text(json.dumps(value))

    return edit


def _table(level: int, change: Callable[[pa.Table], pa.Table]) -> Edit:
    def edit(root: Path) -> None:
        path = root / "METADATA" / f"level{level}.parquet"
        pq.write_table(change(pq.read_table(path)), path)

    return edit


def _set(table: pa.Table, name: str, values: list[Any]) -> pa.Table:
    i = table.column_names.index(name)
    return table.set_column(i, name, pa.array(values, table.schema.field(name).type))


def _replace(table: pa.Table, name: str, row: int, value: Any) -> pa.Table:
    values = table.column(name).to_pylist()
    values[row] = value
    return _set(table, name, values)


def _pop(key: str) -> Callable[[dict[str, Any]], None]:
    return lambda c: c.pop(key)


def _put(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda c: c.__setitem__(key, value)


def _time_end_before_start(t: pa.Table) -> pa.Table:
    end = pc.subtract(t.column("stac:time_start"), pa.scalar(3600 * 10**6, pa.duration("us")))
    return t.append_column("stac:time_end", end)


def _declare(c: dict[str, Any], level: str, entry: list[str]) -> None:
    c["taco:field_schema"][level].append(entry)


VARIANTS: dict[str, tuple[Edit, str]] = {
    "missing_id": (_collection(_pop("id")), codes.COLLECTION_FIELD),
    "bad_id": (_collection(_put("id", "Not An Id!")), codes.COLLECTION_FIELD),
    "licenses_int": (_collection(_put("licenses", 3)), codes.COLLECTION_FIELD),
    "providers_int": (_collection(_put("providers", 3)), codes.COLLECTION_FIELD),
    "bad_task": (_collection(_put("tasks", ["juggling"])), codes.COLLECTION_FIELD),
    "version_number": (_collection(_put("dataset_version", 5)), codes.COLLECTION_FIELD),
    "extent_string": (_collection(_put("extent", "x")), codes.COLLECTION_FIELD),
    "no_taco_version": (_collection(_pop("taco_version")), codes.TACO_VERSION),
    "small_bbox": (
        _collection(lambda c: c["extent"].__setitem__("spatial", [0.0, 0.0, 0.1, 0.1])),
        codes.EXTENT,
    ),
    "short_time": (
        _collection(
            lambda c: c["extent"].__setitem__(
                "temporal", ["2023-01-01T12:00:00Z", "2023-01-02T00:00:00Z"]
            )
        ),
        codes.EXTENT,
    ),
    "pit_root_n": (
        _collection(lambda c: c["taco:pit_schema"]["root"].__setitem__("n", 7)),
        codes.PIT_SCHEMA,
    ),
    "pit_ids": (
        _collection(lambda c: c["taco:pit_schema"]["hierarchy"]["1"][0].__setitem__("id", ["x"])),
        codes.PIT_SCHEMA,
    ),
    "field_type": (
        _collection(lambda c: c["taco:field_schema"]["level0"][2].__setitem__(1, "int8")),
        codes.FIELD_SCHEMA,
    ),
    "field_undeclared": (
        _collection(lambda c: c["taco:field_schema"]["level0"].pop(2)),
        codes.FIELD_SCHEMA,
    ),
    "field_absent": (
        _collection(lambda c: _declare(c, "level0", ["ghost", "string", ""])),
        codes.FIELD_SCHEMA,
    ),
    "duplicate_root_id": (
        _table(0, lambda t: _replace(t, "id", 1, "tile000")),
        codes.DUPLICATE_ID,
    ),
    "bad_type": (_table(1, lambda t: _replace(t, "type", 4, "BLOB")), codes.BAD_TYPE),
    "parent_out_of_range": (
        _table(1, lambda t: _replace(t, "internal:parent_id", 8, 99)),
        codes.BAD_PARENT,
    ),
    "pit_child_ids": (_table(1, lambda t: _replace(t, "id", 3, "b99")), codes.PIT_STRUCTURE),
    "time_order": (_table(1, _time_end_before_start), codes.TIME_ORDER),
}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = write_dataset(tmp_path_factory.mktemp("validate"), "2level", "folder")
    assert taco_gdal.validate(path).ok
    return path


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_broken_variant_reports_its_code(pristine: Path, tmp_path: Path, name: str) -> None:
    edit, code = VARIANTS[name]
    root = tmp_path / "ds"
    shutil.copytree(pristine, root)
    edit(root)
    report = taco_gdal.validate(root)
    assert code in report.codes, str(report)
    assert json.loads(json.dumps(report.to_dict()))["ok"] is False
