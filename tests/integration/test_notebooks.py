"""Every notebook under notebooks/ runs top to bottom, so none of them rots.

Code cells are executed in order in one namespace (no Jupyter kernel needed);
a failing cell fails the test with the notebook and cell number.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ holds no .ipynb file"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(notebook: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cells = json.loads(notebook.read_text())["cells"]
    namespace: dict[str, object] = {"__name__": "__notebook__"}
    for number, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        try:
            exec(compile(source, f"{notebook.name}[cell {number}]", "exec"), namespace)
        except Exception as exc:
            raise AssertionError(f"{notebook.name}: cell {number} failed: {exc!r}") from exc
    assert "/vsisubfile/" in capsys.readouterr().out
