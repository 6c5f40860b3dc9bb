"""export(): a filtered loaded dataset written again, bytes copied, provenance added."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from taco_gdal.format import names
from taco_gdal.model.package import MetadataPackage
from taco_gdal.read import load
from taco_gdal.write import create, export
from taco_gdal.write._layout import Layout
from taco_gdal.write._partition import subset_package
from taco_gdal.write._sources import read_collection
from tests.integration.write._verify import verify_folder, verify_zip
from tests.support.datasets import Shape, make_taco


def _expected(package: MetadataPackage, roots: list[str], out: Path) -> MetadataPackage:
    ids = package.levels[0].column(names.ID).to_pylist()
    rows = np.array([ids.index(r) for r in roots], dtype=np.int64)
    subset = subset_package(package, Layout(package), rows)
    return MetadataPackage(subset.levels, read_collection(out))


@pytest.mark.parametrize("source", ["zip", "folder", "tacocat"])
@pytest.mark.parametrize("shape", ["flat", "3level"])
def test_export_filtered(tmp_path: Path, source: str, shape: Shape) -> None:
    taco = make_taco(tmp_path, shape, n=6)
    package = taco.metadata()
    if source == "zip":
        path = create(taco, tmp_path / "src.tacozip", quiet=True)[0]
    elif source == "folder":
        path = create(taco, tmp_path / "src", quiet=True)[0]
    else:
        create(taco, tmp_path / "src.tacozip", split_size=1, quiet=True)
        path = tmp_path / names.TACOCAT_DIR
    dataset = load(str(path)).sql("SELECT * FROM data WHERE split = 'test'")
    roots = [r for i, r in enumerate(package.levels[0].column("id").to_pylist()) if i % 3 == 2]
    out_zip = export(dataset, tmp_path / "subset.tacozip", quiet=True)
    expected = _expected(package, roots, out_zip)
    verify_zip(out_zip, expected)
    out_dir = export(dataset, tmp_path / "subset", quiet=True)
    verify_folder(out_dir, MetadataPackage(expected.levels, read_collection(out_dir)))
    collection = read_collection(out_zip)
    assert collection[names.SUBSET_OF_KEY] == package.collection["id"]
    assert collection[names.SUBSET_DATE_KEY].startswith("20")
    assert collection[names.PIT_SCHEMA_KEY]["root"]["n"] == len(roots)
    assert collection["extent"] != package.collection["extent"]
    assert collection[names.FIELD_SCHEMA_KEY] == package.collection[names.FIELD_SCHEMA_KEY]


def test_export_everything_copies_bytes_unchanged(tmp_path: Path) -> None:
    taco = make_taco(tmp_path, "2level")
    original = create(taco, tmp_path / "a.tacozip", quiet=True)[0]
    copy = export(load(str(original)), tmp_path / "b.tacozip", quiet=True)
    with zipfile.ZipFile(original) as a, zipfile.ZipFile(copy) as b:
        assert a.namelist() == b.namelist()
        for name in a.namelist():
            if name.startswith("DATA/") and not name.endswith(names.LOCAL_META):
                assert a.read(name) == b.read(name)
    collection = json.loads(zipfile.ZipFile(copy).read(names.COLLECTION_FILE))
    assert collection[names.PIT_SCHEMA_KEY] == taco.metadata().collection[names.PIT_SCHEMA_KEY]


def test_export_cascade_filter_keeps_whole_subtrees(tmp_path: Path) -> None:
    taco = make_taco(tmp_path, "3level", n=4)
    path = create(taco, tmp_path / "a.tacozip", quiet=True)[0]
    # scene000's nir/rgb are days 0..4, scene001's days 5..9: keep scene001 only
    dataset = load(str(path)).filter_datetime("2023-01-07/2023-01-08", level=2)
    out = export(dataset, tmp_path / "one.tacozip", quiet=True)
    verify_zip(out, _expected(taco.metadata(), ["scene001"], out))
