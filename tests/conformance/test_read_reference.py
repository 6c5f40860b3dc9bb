"""Reference-written -> taco_gdal, live: tacotoolbox 0.26.9 writes, both readers read.

For every shape and container, taco_gdal must show what tacoreader 2.4.21 shows:
the same ids and types at every level, the same metadata values, the same bytes
behind every sample, the same filter results, and consolidated level rows that
resolve to the same bytes as navigation.  Where tacotoolbox writes wrong level1+
offsets (reference §1.6), tacoreader's navigation is still right and is the
truth; taco_gdal must detect the bad offsets, warn once and read the right bytes.
"""

from __future__ import annotations

import hashlib
import pathlib
from typing import Any

import pytest

from taco_gdal.format.vsi import parse_subfile
from taco_gdal.read import load
from tests.conformance import _refdump, _tgview, shapes
from tests.conformance._checks import check_warnings
from tests.conformance.conftest import Built, Case
from tests.support.zipinfo import misplaced_rows, zip64_entry_count

LIVE = "live 0.26.9"
DIRECTION = "ref→tg"
ROW = {
    "flat": "flat",
    "two": "2-level",
    "three": "3-level",
    "misplaced": "level1+ offsets misplaced",
}
COLUMN = {"zip": "ZIP", "folder": "FOLDER", "tacocat": "TACOCAT"}


def _case(shape: str, container: str) -> Case:
    return Case(shape, container, ((ROW[shape], COLUMN[container], DIRECTION, LIVE),))


CASES = [_case(s, c) for s in ("flat", "two", "three") for c in ("zip", "folder", "tacocat")]
CASES += [_case("misplaced", "zip"), _case("misplaced", "tacocat")]


def _zip_parts(path: pathlib.Path, container: str) -> list[pathlib.Path]:
    if container == "zip":
        return [path]
    return sorted(path.parent.glob("*.tacozip"))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_taco_gdal_reads_what_tacoreader_reads(
    case: Case, reference_built: Built, tacoreader_view: Any
) -> None:
    path = reference_built(case.shape, case.container)
    filters = shapes.FILTERS.get(case.shape, [])
    expected = tacoreader_view(path, filters)
    # The expected filter ids of shapes.FILTERS are what tacoreader returns.
    assert [f["ids"] for f in expected["filters"]] == [f["expect"] for f in filters]
    misplaced = case.shape == "misplaced"
    if misplaced:  # the reference output really carries the bug
        assert sum(misplaced_rows(p, 1) for p in _zip_parts(path, case.container)) == 8

    reading = _tgview.load_view(path, filters)

    check_warnings(reading, misplaced=misplaced)
    assert reading.view["tree"] == expected["tree"]
    assert reading.view["columns"] == expected["columns"]
    assert reading.view["collection"] == expected["collection"]
    assert reading.view["filters"] == expected["filters"]
    consolidated = _refdump.consolidated_from_tree(expected["tree"])
    assert reading.levels == consolidated


ZIP64_CASE = Case("zip64", "zip", (("ZIP64 (>65,535 members)", "ZIP", DIRECTION, LIVE),))


@pytest.mark.slow
@pytest.mark.parametrize("case", [ZIP64_CASE], ids=str)
def test_zip64_archive_written_by_tacotoolbox(
    case: Case, reference_built: Built, tacoreader_module: Any, files_root: pathlib.Path
) -> None:
    """>65,535 members: ZIP64 end records; every offset still lands on the right bytes."""
    path = reference_built(case.shape, case.container)
    assert zip64_entry_count(path) == shapes.ZIP64_SAMPLES + 3  # + header, level0, COLLECTION
    reference = tacoreader_module.load(str(path))
    try:
        ref_table = reference.data.to_arrow()
    finally:
        reference.close()

    ds = load(path)
    try:
        frame = ds.data
        _, rows = _tgview.frame_rows(frame)
        first, last = frame.read(0), frame.read(shapes.ZIP64_SAMPLES - 1)
    finally:
        ds.close()

    assert [r["id"] for r in rows] == ref_table.column("id").to_pylist()
    assert [r["n"] for r in rows] == ref_table.column("n").to_pylist()
    assert [r["type"] for r in rows] == ["FILE"] * shapes.ZIP64_SAMPLES
    ours = [parse_subfile(r[_refdump.GDAL_VSI]) for r in rows]
    theirs = [parse_subfile(p) for p in ref_table.column(_refdump.GDAL_VSI).to_pylist()]
    assert [(s.offset, s.size) for s in ours] == [(s.offset, s.size) for s in theirs]
    assert (first, last) == (rows[0][_refdump.GDAL_VSI], rows[-1][_refdump.GDAL_VSI])

    sources = {
        seed: hashlib.sha256((files_root / f"s{seed:05d}.tif").read_bytes()).hexdigest()
        for seed in range(4)
    }
    with open(path, "rb") as handle:
        for index, sub in enumerate(ours):
            handle.seek(sub.offset)
            assert hashlib.sha256(handle.read(sub.size)).hexdigest() == sources[index % 4]
    last_source = files_root / f"s{(shapes.ZIP64_SAMPLES - 1) % 4:05d}.tif"
    assert _tgview.gdal_bytes(str(last)) == last_source.read_bytes()
