"""Reader fixtures: datasets written by the reference writer (tacotoolbox 0.26.9) and by ours.

Reference datasets are built here from tiny GeoTIFFs made with rasterio, in
every container the reference writes: ``zip`` (``.tacozip``), ``folder``,
``tacocat`` (split parts + ``.tacocat/`` folder, opened as the folder that
holds it) and ``tacocat-dir`` (the ``.tacocat`` folder itself), plus
``tacocat-binary``: the spec's binary ``__TACOCAT__`` assembled from the same
level tables.

Every sample, FOLDERs included, carries the STAC extension, so filters work
at every level, and ``score`` (double).  Positions decide everything, so the
tests compute expected results from :class:`Node` trees without any reader:

* level-0 index ``i``, level-1 index ``j``, level-2 index ``k``:
  ``lon = 20 i + 5 j + k`` and ``lat = 10 * level`` (raster origin; the STAC
  centroid is ``(lon + 0.4, lat - 0.4)``: 8 x 8 pixels of 0.1 degree);
* ``time = 2023-01-01 + i days + j hours + k minutes + level microseconds``.

Shapes: ``flat`` (``s0..s4``), ``2level`` (``tile0..tile2`` x ``a, b``),
``3level`` (``region0, region1`` x ``s1, s2`` x ``b0, b1, b2``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import rasterio
from rasterio.transform import from_origin

from taco_gdal.format.header import HeaderEntry
from taco_gdal.format.names import COLLECTION_FILE, TACOCAT_DIR, TACOCAT_FILE
from taco_gdal.format.tacocat import TACOCAT_HEADER_SIZE, TacoCatHeader

T0 = datetime(2023, 1, 1)
SHAPES = ("flat", "2level", "3level")
REFERENCE_FORMATS = ("zip", "folder", "tacocat", "tacocat-dir", "tacocat-binary")
LAYOUT: dict[str, list[list[str]]] = {
    "flat": [[f"s{i}" for i in range(5)]],
    "2level": [[f"tile{i}" for i in range(3)], ["a", "b"]],
    "3level": [["region0", "region1"], ["s1", "s2"], ["b0", "b1", "b2"]],
}


@dataclass(frozen=True)
class Node:
    """One sample as written: where it sits and what its metadata is."""

    ids: tuple[str, ...]
    position: tuple[int, ...]
    type: str
    children: tuple[Node, ...] = ()

    @property
    def id(self) -> str:
        return self.ids[-1]

    @property
    def level(self) -> int:
        return len(self.position) - 1

    @property
    def origin(self) -> tuple[float, float]:
        i, j, k = (*self.position, 0, 0)[:3]
        return 20.0 * i + 5.0 * j + k, 10.0 * self.level

    @property
    def centroid(self) -> tuple[float, float]:
        lon, lat = self.origin
        return lon + 0.4, lat - 0.4

    @property
    def time(self) -> datetime:
        i, j, k = (*self.position, 0, 0)[:3]
        return T0 + timedelta(days=i, hours=j, minutes=k, microseconds=self.level)


def build_tree(shape: str) -> tuple[Node, ...]:
    """The sample tree of ``shape``."""
    layout = LAYOUT[shape]

    def make(ids: tuple[str, ...], position: tuple[int, ...]) -> Node:
        depth = len(position)
        if depth == len(layout):
            return Node(ids, position, "FILE")
        kids = tuple(make((*ids, c), (*position, j)) for j, c in enumerate(layout[depth]))
        return Node(ids, position, "FOLDER", kids)

    return tuple(
        make((layout[0][i],), (i,)) if len(layout) > 1 else Node((layout[0][i],), (i,), "FILE")
        for i in range(len(layout[0]))
    )


def nodes_at(tree: tuple[Node, ...], level: int) -> list[Node]:
    """Nodes of a level in depth-first (stored) order."""
    out: list[Node] = []

    def walk(node: Node) -> None:
        if node.level == level:
            out.append(node)
        for child in node.children:
            walk(child)

    for node in tree:
        walk(node)
    return out


def files_of(tree: tuple[Node, ...]) -> list[Node]:
    out: list[Node] = []
    for level in range(4):
        out += [n for n in nodes_at(tree, level) if n.type == "FILE"]
    return out


@dataclass
class RefDataset:
    """A written dataset and what it must contain."""

    path: Path
    format: str
    shape: str
    tree: tuple[Node, ...]
    source_bytes: dict[tuple[str, ...], bytes] = field(default_factory=dict)

    @property
    def depth(self) -> int:
        return len(LAYOUT[self.shape]) - 1

    def level(self, level: int) -> list[Node]:
        return nodes_at(self.tree, level)


def make_tif(path: Path, value: int, origin: tuple[float, float]) -> bytes:
    """An 8 x 8 uint8 GeoTIFF filled with ``value``; returns its bytes."""
    profile = {
        "driver": "GTiff",
        "width": 8,
        "height": 8,
        "count": 1,
        "dtype": "uint8",
        "crs": "EPSG:4326",
        "transform": from_origin(origin[0], origin[1], 0.1, 0.1),
    }
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(np.full((1, 8, 8), value % 256, dtype=np.uint8))
    return path.read_bytes()


def _stac(node: Node) -> Any:
    from tacotoolbox.sample.extensions.stac import STAC

    lon, lat = node.origin
    micros = int(node.time.replace(tzinfo=UTC).timestamp()) * 1_000_000 + node.time.microsecond
    return STAC(
        crs="EPSG:4326",
        tensor_shape=(1, 8, 8),
        geotransform=(lon, 0.1, 0.0, lat, 0.0, -0.1),
        time_start=micros,
    )


def reference_taco(shape: str, src: Path) -> tuple[Any, dict[tuple[str, ...], bytes]]:
    """A tacotoolbox ``Taco`` of ``shape`` and the bytes of every FILE sample."""
    from tacotoolbox.datamodel import Sample, Taco, Tortilla

    src.mkdir(parents=True, exist_ok=True)
    blobs: dict[tuple[str, ...], bytes] = {}
    counter = iter(range(1, 10_000))

    def sample(node: Node) -> Any:
        if node.type == "FILE":
            path = src / ("_".join(node.ids) + ".tif")
            blobs[node.ids] = make_tif(path, next(counter), node.origin)
            made = Sample(id=node.id, path=path)
        else:
            made = Sample(id=node.id, path=Tortilla(samples=[sample(c) for c in node.children]))
        made.extend_with(_stac(node))
        made.extend_with({"score": float(node.position[-1])})
        return made

    tree = build_tree(shape)
    taco = Taco(
        tortilla=Tortilla(samples=[sample(n) for n in tree]),
        id=f"ref_{shape}",
        dataset_version="0.1.0",
        description=f"reference-writer dataset, shape {shape}",
        licenses=["CC-BY-4.0"],
        providers=[{"name": "taco_gdal tests"}],
        tasks=["classification"],
        title=f"Reference {shape}",
        keywords=["reference", shape],
    )
    return taco, blobs


def write_binary_tacocat(folder: Path, target: Path) -> Path:
    """The spec's binary ``__TACOCAT__`` holding the tables of a ``.tacocat/`` folder."""
    levels = sorted(folder.glob("level*.parquet"), key=lambda p: int(p.stem[5:]))
    blobs = [p.read_bytes() for p in levels]
    collection = (folder / COLLECTION_FILE).read_bytes()
    entries = []
    offset = TACOCAT_HEADER_SIZE
    for blob in blobs:
        entries.append(HeaderEntry(offset, len(blob)))
        offset += len(blob)
    header = TacoCatHeader(tuple(entries), HeaderEntry(offset, len(collection)))
    target.write_bytes(header.pack() + b"".join(blobs) + collection)
    return target


def write_reference(root: Path, shape: str, fmt: str) -> RefDataset:
    """Write ``shape`` with tacotoolbox in container ``fmt`` under ``root``."""
    import tacotoolbox

    out = root / f"{shape}_{fmt}"
    taco, blobs = reference_taco(shape, out / "src")
    if fmt == "zip":
        path = tacotoolbox.create(taco, out / f"{shape}.tacozip")[0]
    elif fmt == "folder":
        path = tacotoolbox.create(taco, out / shape)[0]
    else:
        parts = out / "parts"
        parts.mkdir()
        tacotoolbox.create(taco, parts / f"{shape}.tacozip", split_size="1KB")
        path = {
            "tacocat": parts,
            "tacocat-dir": parts / TACOCAT_DIR,
            "tacocat-binary": write_binary_tacocat(parts / TACOCAT_DIR, parts / TACOCAT_FILE),
        }[fmt]
    return RefDataset(Path(path), fmt, shape, build_tree(shape), blobs)


@pytest.fixture(scope="session")
def reference(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[[str, str], RefDataset]]:
    """``reference(shape, fmt)``: a dataset written by tacotoolbox, built once per session."""
    root = tmp_path_factory.mktemp("reference")
    cache: dict[tuple[str, str], RefDataset] = {}

    def get(shape: str, fmt: str) -> RefDataset:
        if (shape, fmt) not in cache:
            cache[(shape, fmt)] = write_reference(root, shape, fmt)
        return cache[(shape, fmt)]

    yield get


@pytest.fixture(
    params=[(s, f) for s in SHAPES for f in REFERENCE_FORMATS], ids=lambda p: f"{p[0]}-{p[1]}"
)
def ref(request: pytest.FixtureRequest, reference: Callable[[str, str], RefDataset]) -> RefDataset:
    """Every reference shape in every reference container."""
    shape, fmt = request.param
    return reference(shape, fmt)


def parts_of(dataset: RefDataset) -> list[Path]:
    """The source ZIPs of a TACOCAT dataset."""
    folder = (
        dataset.path
        if dataset.path.is_dir() and dataset.format == "tacocat"
        else dataset.path.parent
    )
    return sorted(folder.glob("*.tacozip"))
