"""The reader over datasets written by taco_gdal's own writer (tests/support/datasets.py).

{flat, 2level, 3level, padded} x {zip, folder, tacocat}: counts and ids at every
level (padding hidden), navigation to every file (bytes equal, opens with
rasterio and GDAL), and filters at every level that has geometry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import rasterio
import shapely
from osgeo import gdal

import taco_gdal.read as reader
from taco_gdal.io.vsi import read_all
from taco_gdal.read import TacoDataFrame
from tests.support.datasets import SHAPES, make_taco, write_dataset

CONTAINERS = ("zip", "folder", "tacocat")


@dataclass(frozen=True)
class Item:
    """A sample as the factory built it (padding excluded)."""

    ids: tuple[str, ...]
    type: str
    source: str | None
    centroid: tuple[float, float] | None
    time: datetime | None
    children: tuple[Item, ...]

    @property
    def level(self) -> int:
        return len(self.ids) - 1


def _item(sample: Any, parents: tuple[str, ...]) -> Item:
    ids = (*parents, sample.id)
    children: tuple[Item, ...] = ()
    if sample.tortilla is not None:
        children = tuple(_item(c, ids) for c in sample.tortilla.samples if not c.is_padding)
    wkb = sample.get("stac:centroid")
    point = shapely.from_wkb(wkb) if wkb is not None else None
    return Item(
        ids,
        sample.type,
        sample.file_path,
        None if point is None else (point.x, point.y),
        sample.get("stac:time_start"),
        children,
    )


def _level(items: tuple[Item, ...], level: int) -> list[Item]:
    out: list[Item] = []

    def walk(item: Item) -> None:
        if item.level == level:
            out.append(item)
        for child in item.children:
            walk(child)

    for item in items:
        walk(item)
    return out


@dataclass(frozen=True)
class Written:
    path: Path
    tree: tuple[Item, ...]
    sources: Path

    @property
    def depth(self) -> int:
        return max(i.level for lvl in range(4) for i in _level(self.tree, lvl))


@pytest.fixture(scope="session")
def ours(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str, str], Written]]:
    root = tmp_path_factory.mktemp("ours")
    cache: dict[tuple[str, str], Written] = {}

    def get(shape: str, container: str) -> Written:
        if (shape, container) not in cache:
            path = write_dataset(root, shape, container)  # type: ignore[arg-type]
            n = 3
            taco = make_taco(root / "expected" / f"{shape}_{container}", shape, n=n)  # type: ignore[arg-type]
            tree = tuple(_item(s, ()) for s in taco.tortilla.samples)
            cache[(shape, container)] = Written(
                path, tree, root / f"{shape}_{container}" / f"src_{shape}"
            )
        return cache[(shape, container)]

    yield get


@pytest.fixture(params=[(s, c) for s in SHAPES for c in CONTAINERS], ids=lambda p: f"{p[0]}-{p[1]}")
def written(request: pytest.FixtureRequest, ours: Callable[[str, str], Written]) -> Written:
    return ours(*request.param)


def test_counts_and_ids_at_every_level(written: Written) -> None:
    ds = reader.load(written.path)
    assert ds.data["id"].tolist() == [i.ids[-1] for i in written.tree]
    for level in range(1, written.depth + 1):
        rows = ds.sql(f"SELECT * FROM level{level}").data
        expected = _level(written.tree, level)
        assert rows["id"].tolist() == [i.ids[-1] for i in expected]
        assert not rows["id"].str.startswith("__TACOPAD__").any()


def _walk(frame: TacoDataFrame, items: tuple[Item, ...], sources: Path) -> int:
    assert frame["id"].tolist() == [i.ids[-1] for i in items]
    count = 0
    for position, item in enumerate(items):
        target = frame.read(position if position % 2 else item.ids[-1])
        if item.type == "FILE":
            assert isinstance(target, str) and item.source is not None
            assert read_all(target) == (sources / Path(item.source).name).read_bytes()
            with rasterio.open(target) as src:
                assert src.read(1).shape == (16, 16)
            assert gdal.Open(target).RasterXSize == 16
            count += 1
        else:
            assert isinstance(target, TacoDataFrame)
            count += _walk(target, item.children, sources)
    return count


def test_navigation_bytes_and_gdal(written: Written) -> None:
    files = [i for lvl in range(4) for i in _level(written.tree, lvl) if i.type == "FILE"]
    assert _walk(reader.load(written.path).data, written.tree, written.sources) == len(files)


def _roots_with(written: Written, level: int, keep: Callable[[Item], bool]) -> list[str]:
    def hit(item: Item) -> bool:
        if item.level == level:
            return keep(item)
        return any(hit(c) for c in item.children)

    return [r.ids[-1] for r in written.tree if hit(r)]


def test_filters_at_every_level_with_geometry(written: Written) -> None:
    ds = reader.load(written.path)
    checked = 0
    for level in range(written.depth + 1):
        located = [i for i in _level(written.tree, level) if i.centroid is not None]
        if not located:
            continue  # this level has no stac columns (folders only)
        target = located[len(located) // 2]
        assert target.centroid is not None and target.time is not None
        x, y = target.centroid
        boxed = ds.filter_bbox(x - 1e-6, y - 1e-6, x + 1e-6, y + 1e-6, level=level)
        assert boxed.data["id"].tolist() == _roots_with(written, level, lambda i, t=target: i == t)
        timed = ds.filter_datetime(target.time, level=level)
        same = _roots_with(written, level, lambda i, t=target: i.time == t.time)
        assert timed.data["id"].tolist() == same
        checked += 1
    assert checked >= 1
