"""Layout.file_order (NumPy) against a plain depth-first walk of the same tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.write._layout import Layout, SampleRef
from tests.support.datasets import SHAPES, Shape, make_taco


def _walk(layout: Layout) -> list[tuple[int, int]]:
    """FILE samples in depth-first order, by recursion over ``Layout.children``."""
    out: list[tuple[int, int]] = []

    def visit(level: int, row: int) -> None:
        ref = SampleRef(level, row)
        if not layout.folder[level][row]:
            out.append((level, row))
            return
        for child in layout.children(ref):
            visit(level + 1, child)

    for row in range(layout.rows(0)):
        visit(0, row)
    return out


def _mixed_taco() -> Taco:
    """FOLDER roots whose children mix FILEs and FOLDERs, three levels deep."""

    def root(r: int) -> Sample:
        def inner(name: str) -> Tortilla:
            return Tortilla([Sample(f"x{i}", f"{r}-{name}{i}".encode()) for i in range(2)])

        mid = Tortilla(
            [
                Sample("f", f"{r}-f".encode()),
                Sample("d", inner("d")),
                Sample("g", f"{r}-g".encode()),
                Sample("e", inner("e")),
            ]
        )
        return Sample(f"root{r}", mid)

    return Taco(
        Tortilla([root(r) for r in range(3)]), id="mixed", dataset_version="1",
        description="mixed kinds", licenses=["CC0-1.0"], providers=[{"name": "test"}],
        tasks=["other"],
    )  # fmt: skip


@pytest.mark.parametrize("shape", SHAPES)
def test_file_order_is_the_depth_first_walk(tmp_path: Path, shape: Shape) -> None:
    layout = Layout(make_taco(tmp_path, shape, n=4).metadata())
    levels, rows = layout.file_order()
    assert list(zip(levels.tolist(), rows.tolist(), strict=True)) == _walk(layout)


def test_file_order_with_files_and_folders_mixed_below_the_root() -> None:
    layout = Layout(_mixed_taco().metadata())
    levels, rows = layout.file_order()
    walked = _walk(layout)
    assert list(zip(levels.tolist(), rows.tolist(), strict=True)) == walked
    names = [layout.data_path(SampleRef(k, r)) for k, r in walked]
    assert names[:6] == [
        "root0/f", "root0/d/x0", "root0/d/x1", "root0/g", "root0/e/x0", "root0/e/x1",
    ]  # fmt: skip
    assert names[6] == "root1/f"
    assert len(names) == 3 * 6
