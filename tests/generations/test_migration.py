"""docs/migration.md: every mapped tacoreader 2.x call has an example, and every example runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.generations.conftest import golden
from tests.integration.analyst.conftest import flat_path, nested_path, scene_dir

__all__ = ["flat_path", "nested_path", "scene_dir"]  # fixtures used here

PAGE = Path(__file__).resolve().parents[2] / "docs" / "migration.md"
_BLOCK = re.compile(r"^### (?P<title>.+?)\n(?P<body>.*?)(?=^##|\Z)", re.S | re.M)
_CODE = re.compile(r"```python\n(.*?)```", re.S)


def _sections() -> list[tuple[str, str]]:
    assert PAGE.is_file(), f"missing {PAGE}"
    found = []
    for match in _BLOCK.finditer(PAGE.read_text()):
        codes = _CODE.findall(match["body"])
        assert codes, f"section {match['title']!r} of {PAGE.name} has no python example"
        found.extend((match["title"], code) for code in codes)
    return found


SECTIONS = _sections()


def test_every_public_tacoreader_call_is_mapped() -> None:
    import tacoreader
    from tacoreader.dataset import TacoDataset

    page = PAGE.read_text()
    public = [n for n in tacoreader.__all__ if n not in ("TacoDataset", "TacoDataFrame")]
    model = set(dir(__import__("pydantic").BaseModel))
    methods = [n for n in dir(TacoDataset) if not n.startswith("_") and n not in model]
    frame = [
        "read",
        "columns",
        "shape",
        "head",
        "tail",
        "to_pandas",
        "query",
        "sort_values",
        "assign",
        "groupby",
        "loc",
        "iloc",
    ]
    missing = [n for n in public if f"tacoreader.{n}(" not in page]
    missing += [n for n in methods if f"ds.{n}" not in page and f"`{n}`" not in page]
    missing += [n for n in frame if f"frame.{n}" not in page and f"`{n}`" not in page]
    assert not missing, f"{PAGE.name} does not map {missing}"


@pytest.mark.parametrize(("title", "code"), SECTIONS, ids=[t for t, _ in SECTIONS])
def test_example_runs(
    title: str, code: str, flat_path: Path, nested_path: Path, tmp_path: Path
) -> None:
    namespace = {
        "path": str(flat_path),
        "nested": str(nested_path),
        "old": str(golden("v1/v1_flat.taco")),
        "tmp": tmp_path,
    }
    exec(compile(code, f"{PAGE.name}: {title}", "exec"), namespace)
