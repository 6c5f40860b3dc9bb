"""taco_gdal-written -> reference, live: taco_gdal writes, tacoreader 2.4.21 reads.

Each shape is written from one description by both writers.  tacoreader must
show the taco_gdal output exactly like the tacotoolbox 0.26.9 output (padding:
like the tacotoolbox 0.26.1 golden, the last version that padded): same rows and
values at every level, same sample bytes, same filter results at level 0 and in
cascades, and ``rasterio.open`` on every ``internal:gdal_vsi`` path returns the
source pixels.  Unlike tacotoolbox, taco_gdal's consolidated level1+ offsets must
be right even for folder ids that do not sort in creation order.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
from typing import Any

import numpy as np
import pytest
import rasterio

from taco_gdal.model.extent import box_contains
from tests.conformance import _refdump, shapes
from tests.conformance.conftest import GOLDEN, Built, Case
from tests.support.zipinfo import misplaced_rows, zip64_entry_count

LIVE = "live"
DIRECTION = "tg→ref"
ROW = {
    "flat": "flat",
    "two": "2-level",
    "three": "3-level",
    "padded": "padded `__TACOPAD__`",
    "misplaced": "level1+ offsets misplaced",
}
COLUMN = {"zip": "ZIP", "folder": "FOLDER", "tacocat": "TACOCAT"}
DIFFERENT_BY_DESIGN = ("taco_version", "taco:field_schema", "extent")
"""COLLECTION keys where taco_gdal deliberately differs (docs/compatibility.md)."""


def _case(shape: str, container: str) -> Case:
    return Case(shape, container, ((ROW[shape], COLUMN[container], DIRECTION, LIVE),))


CASES = [
    _case(s, c) for s in ("flat", "two", "three", "padded") for c in ("zip", "folder", "tacocat")
]
CASES += [_case("misplaced", "zip"), _case("misplaced", "tacocat")]


def _golden_view(name: str) -> dict[str, Any]:
    manifest = json.loads((GOLDEN / "manifest.json").read_text(encoding="utf-8"))
    return dict(manifest["entries"][name]["view"])


def _expected(case: Case, reference_built: Built, tacoreader_view: Any) -> dict[str, Any]:
    if case.shape == "padded":  # tacotoolbox 0.26.9 cannot pad any more
        return _golden_view(f"v0261_padded_{case.container}")
    path = reference_built(case.shape, case.container)
    return dict(tacoreader_view(path, shapes.FILTERS.get(case.shape, [])))


def _field_types(collection: dict[str, Any]) -> dict[str, list[tuple[str, str]]]:
    schema = collection.get("taco:field_schema") or {}
    return {level: sorted((f[0], f[1]) for f in fields) for level, fields in schema.items()}


def _comparable(collection: dict[str, Any]) -> dict[str, Any]:
    """COLLECTION without the keys that differ by design, and without ``pit_schema.shape``.

    ``shape`` is absent before tacotoolbox 0.26.9 (padded golden) and stale in the
    reference's ``.tacocat/COLLECTION.json`` (copied from the first part); its
    correctness in taco_gdal's output is checked separately.
    """
    out = {k: v for k, v in collection.items() if k not in DIFFERENT_BY_DESIGN}
    sources = out.get("taco:sources")
    if isinstance(sources, dict) and isinstance(sources.get("extents"), list):
        # each part's extent differs as the dataset's does (see _check_extents)
        parts = [{k: v for k, v in e.items() if k != "spatial"} for e in sources["extents"]]
        out["taco:sources"] = {**sources, "extents": parts}
    pit = dict(out.get("taco:pit_schema") or {})
    pit.pop("shape", None)
    out["taco:pit_schema"] = pit
    return out


def _check_extents(got: dict[str, Any], expected: dict[str, Any]) -> None:
    """The reference boxes the centroids; taco_gdal boxes the footprints, which contain them."""
    pairs = [(got["extent"], expected["extent"])]
    if "taco:sources" in expected:
        pairs += list(
            zip(got["taco:sources"]["extents"], expected["taco:sources"]["extents"], strict=True)
        )
    for ours, theirs in pairs:
        assert ours["temporal"] == theirs["temporal"]
        assert box_contains(ours["spatial"], theirs["spatial"]), (ours, theirs)


def _reference_level_bytes(tacoreader_module: Any, path: pathlib.Path) -> list[list[str]]:
    """SHA-256 of the bytes behind each FILE row of tacoreader's raw level{k} views."""
    ds = tacoreader_module.load(str(path))
    try:
        out = []
        for level in range(1, ds.pit_schema.max_depth() + 1):
            table = ds.sql(f"SELECT * FROM level{level}")
            digests = [
                hashlib.sha256(_refdump.read_vsi_bytes(row[_refdump.GDAL_VSI])).hexdigest()
                for row in table.to_pylist()
                if row["type"] == "FILE" and not row["id"].startswith(_refdump.PADDING_PREFIX)
            ]
            out.append(digests)
        return out
    finally:
        ds.close()


@pytest.mark.parametrize("case", CASES, ids=str)
def test_tacoreader_reads_taco_gdal_output(
    case: Case,
    taco_gdal_built: Built,
    reference_built: Built,
    tacoreader_view: Any,
    tacoreader_module: Any,
) -> None:
    filters = shapes.FILTERS.get(case.shape, [])
    path = taco_gdal_built(case.shape, case.container)
    got = tacoreader_view(path, filters, keep_paths=True)
    expected = _expected(case, reference_built, tacoreader_view)

    assert _refdump.strip_paths(got["tree"]) == expected["tree"]
    assert got["padding"] == expected["padding"]
    for level, columns in expected["columns"].items():
        assert sorted(got["columns"][level]) == sorted(columns), level
    assert [f["ids"] for f in got["filters"]] == [f["expect"] for f in filters]
    assert _comparable(got["collection"]) == _comparable(expected["collection"])
    _check_extents(got["collection"], expected["collection"])
    assert _field_types(got["collection"]) == _field_types(expected["collection"])
    pit = got["collection"]["taco:pit_schema"]
    assert pit["shape"][0] == pit["root"]["n"]

    spec = shapes.shape(case.shape)
    files = _refdump.file_rows(got["tree"])
    nodes = list(shapes.iter_files(spec))
    assert [r["id"] for r in files] == [n["id"] for n in nodes]
    for row, node in zip(files, nodes, strict=True):
        with rasterio.open(row["vsi"]) as src:
            np.testing.assert_array_equal(src.read(1), shapes.pixels(node["seed"]))

    # Consolidated level1+ offsets (what tacoreader's sql/flatten/cascades use) are right.
    consolidated = _refdump.consolidated_from_tree(expected["tree"])
    wanted = [[r["sha256"] for r in level if r["type"] == "FILE"] for level in consolidated[1:]]
    assert _reference_level_bytes(tacoreader_module, path) == wanted
    if case.container == "zip" and len(consolidated) > 1:
        assert misplaced_rows(path, 1) == 0


ZIP64_CASE = Case("zip64", "zip", (("ZIP64 (>65,535 members)", "ZIP", DIRECTION, LIVE),))


@pytest.mark.slow
@pytest.mark.parametrize("case", [ZIP64_CASE], ids=str)
def test_tacoreader_reads_taco_gdal_zip64(
    case: Case, taco_gdal_built: Built, tacoreader_module: Any, files_root: pathlib.Path
) -> None:
    path = taco_gdal_built(case.shape, case.container)
    assert zip64_entry_count(path) == shapes.ZIP64_SAMPLES + 3
    ds = tacoreader_module.load(str(path))
    try:
        table = ds.data.to_arrow()
        last = ds.data.read(shapes.ZIP64_SAMPLES - 1)
    finally:
        ds.close()
    spec = shapes.shape(case.shape)
    assert table.column("id").to_pylist() == [n["id"] for n in spec["samples"]]
    assert table.column("n").to_pylist() == list(range(shapes.ZIP64_SAMPLES))
    sources = {
        seed: hashlib.sha256((files_root / f"s{seed:05d}.tif").read_bytes()).hexdigest()
        for seed in range(4)
    }
    paths = table.column(_refdump.GDAL_VSI).to_pylist()
    digests = [hashlib.sha256(_refdump.read_vsi_bytes(p)).hexdigest() for p in paths]
    assert digests == [sources[i % 4] for i in range(shapes.ZIP64_SAMPLES)]
    with rasterio.open(last) as src:
        np.testing.assert_array_equal(src.read(1), shapes.pixels((shapes.ZIP64_SAMPLES - 1) % 4))
