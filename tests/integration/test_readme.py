"""The Python example of README.md's "## Use" section runs, on GeoTIFFs made with rasterio."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
from pathlib import Path

import pytest

from tests.support.rasters import raster_folder

README = Path(__file__).resolve().parents[2] / "README.md"


def _use_block() -> str:
    text = README.read_text(encoding="utf-8")
    found = re.search(r"^## Use\n\n```python\n(.*?)^```", text, re.S | re.M)
    assert found, "README.md has no python block under '## Use'"
    return found.group(1)


def test_the_readme_use_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.move(raster_folder(tmp_path), tmp_path / "scenes")  # 4 tagged GeoTIFFs, Madrid
    monkeypatch.chdir(tmp_path)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(_use_block(), str(README), "exec"), {"__name__": "readme"})
    lines = printed.getvalue().splitlines()
    assert lines[0] == "[119.5]" and lines[1] == "(20, 20)"  # pixels 20..219, each twice
    assert os.path.isfile(tmp_path / "my_dataset.tacozip")
