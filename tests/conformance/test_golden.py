"""taco_gdal reads every committed golden dataset exactly as its reference reader did.

The golden datasets (tests/conformance/golden/, made by scripts/make_golden.py)
were written by tacotoolbox 0.18.0, 0.20.7, 0.26.1 and 0.26.9 and read back by
the tacoreader of their time; ``manifest.json`` holds what that reader showed.
No reference tool is needed here, so this module runs offline.  A golden file
that is missing or changed fails, it never skips.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from typing import Any

import pytest

from taco_gdal.read import load
from tests.conformance import _refdump, _tgview, shapes
from tests.conformance._checks import check_warnings
from tests.conformance.conftest import GOLDEN, Case
from tests.support.zipinfo import misplaced_rows

MANIFEST_PATH = GOLDEN / "manifest.json"
README_PATH = GOLDEN / "README.md"
REF_TO_TG = "ref→tg"

ROW_OF_SHAPE = {
    "flat": "flat",
    "two": "2-level",
    "three": "3-level",
    "padded": "padded `__TACOPAD__`",
    "misplaced": "level1+ offsets misplaced",
}
CONTAINER_COLUMN = {"zip": "ZIP", "folder": "FOLDER", "tacocat": "TACOCAT"}


def _manifest() -> dict[str, Any]:
    if not MANIFEST_PATH.is_file():  # collection must not die: the test below fails instead
        return {"entries": {}}
    return dict(json.loads(MANIFEST_PATH.read_text(encoding="utf-8")))


MANIFEST = _manifest()


def _cells(name: str, entry: dict[str, Any]) -> tuple[tuple[str, str, str, str], ...]:
    tool = entry["tool"]["tacotoolbox"]
    column = CONTAINER_COLUMN[entry["container"]]
    source = f"golden {tool}"
    cells = [(ROW_OF_SHAPE[entry["shape"]], column, REF_TO_TG, source)]
    if tool < "0.21":
        cells.append(("no `internal:current_id`", column, REF_TO_TG, source))
    if name.endswith("_bincat"):
        cells.append(("binary `__TACOCAT__`", column, REF_TO_TG, source))
    return tuple(cells)


CASES = [
    Case(e["shape"], e["container"], _cells(name, e), name=name)
    for name, e in MANIFEST["entries"].items()
]


def test_manifest_and_readme_exist() -> None:
    assert MANIFEST_PATH.is_file(), f"missing {MANIFEST_PATH}: run scripts/make_golden.py"
    assert README_PATH.is_file(), f"missing {README_PATH}"
    assert len(MANIFEST["entries"]) >= 12
    assert MANIFEST["generated_by"] == "scripts/make_golden.py"


def test_every_golden_file_is_present_and_unchanged() -> None:
    listed = 0
    for name, entry in MANIFEST["entries"].items():
        for relative, digest in entry["files"].items():
            path = GOLDEN / relative
            assert path.is_file(), f"{name}: golden file {path} is missing"
            assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, f"{path} changed"
            listed += 1
        assert (GOLDEN / entry["load"]).exists(), f"{name}: {entry['load']} is missing"
    on_disk = {
        str(p.relative_to(GOLDEN))
        for p in GOLDEN.rglob("*")
        if p.is_file() and p not in (MANIFEST_PATH, README_PATH)
    }
    assert listed == len(on_disk), "golden/ holds files the manifest does not list"


def test_golden_total_size_stays_small() -> None:
    total = sum(p.stat().st_size for p in GOLDEN.rglob("*") if p.is_file())
    assert total < 2_000_000


def test_misplaced_golden_really_has_the_reference_bug() -> None:
    entry = MANIFEST["entries"]["v0269_misplaced_zip"]
    wrong = misplaced_rows(GOLDEN / entry["load"], 1)
    assert wrong == entry["misplaced_level1_rows"] == 8


@pytest.mark.parametrize("case", CASES, ids=str)
def test_golden_reads_like_its_reference_reader(case: Case) -> None:
    entry = MANIFEST["entries"][case.name]
    expected = entry["view"]
    reading = _tgview.load_view(GOLDEN / entry["load"], shapes.FILTERS.get(case.shape))
    view = reading.view
    check_warnings(reading, misplaced=case.shape == "misplaced")

    assert [r["id"] for r in view["tree"]] == [r["id"] for r in expected["tree"]]
    assert view["tree"] == expected["tree"]
    assert view["columns"] == expected["columns"]
    assert view["collection"] == expected["collection"]
    # tacoreader shows __TACOPAD__ rows among read() children; taco_gdal hides them
    # everywhere (spec 7.2.4: padding is filtered from user-facing views).
    assert view["padding"] == 0
    # Filters follow tacoreader 2.4.x semantics (ST_Intersects, day granularity): the
    # expected ids are those tacoreader 2.4.21 returns on tacotoolbox 0.26.9 output.
    wanted = [f["expect"] for f in shapes.FILTERS.get(case.shape, [])]
    assert [f["ids"] for f in view["filters"]] == wanted
    # Consolidated METADATA/levelK rows resolve to the same bytes as navigation.
    consolidated = _refdump.consolidated_from_tree(expected["tree"])
    assert reading.levels == consolidated


@pytest.mark.parametrize(
    ("name", "reads"),
    [("v0207_two_zip", 2), ("v0207_three_zip", 2), ("v0269_misplaced_zip", 4)],
)
def test_offset_check_reads_only_when_the_bug_is_possible(
    name: str, reads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sorted parent folders: no read beyond the header and metadata; else, per level, one
    folder's ``__meta__`` (it settles a correct level) and, when it disagrees, all of them."""
    from taco_gdal.io.vsi import VSIFile

    entry = MANIFEST["entries"][name]
    done: list[tuple[int, int]] = []
    original = VSIFile.read_at

    def counting(self: VSIFile, offset: int, size: int) -> bytes:
        done.append((offset, size))
        return original(self, offset, size)

    monkeypatch.setattr(VSIFile, "read_at", counting)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        load(GOLDEN / entry["load"]).close()
    assert len(done) == reads, done
