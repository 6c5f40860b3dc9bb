"""internal:offset / internal:size are measured per row, whatever order sibling ids sort in.

The reference writer pastes level-1+ offsets in sorted folder-path order next to
rows in sample order; with folder ids ["t2", "t10", "b", "a"] every level-1 row
pointed at another folder's bytes (reference-implementation.md 1.6).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from taco_gdal.format import names
from taco_gdal.format.vsi import build_subfile
from taco_gdal.io.vsi import read_all
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.write import create
from tests.integration.write._package import package_from_tree
from tests.integration.write._verify import verify_folder, verify_zip

FOLDER_IDS = ["t2", "t10", "b", "a"]


def _taco(tmp_path: Path) -> Taco:
    folders = []
    for folder in FOLDER_IDS:
        children = []
        for child in ("x", "y"):
            path = tmp_path / f"{folder}-{child}.bin"
            path.write_bytes(f"{folder}/{child} ".encode() * 7)
            children.append(Sample(child, path))
        folders.append(Sample(folder, Tortilla(children)))
    return Taco(
        Tortilla(folders),
        id="order",
        dataset_version="1",
        description="sibling ids that do not sort in creation order",
        licenses=["MIT"],
        providers=[{"name": "tests"}],
        tasks=["other"],
    )


def test_level1_offsets_point_at_their_own_bytes(tmp_path: Path) -> None:
    taco = _taco(tmp_path)
    out = create(taco, tmp_path / "order.tacozip", quiet=True)[0]
    levels = verify_zip(out, taco.metadata())
    level1 = levels[1]
    for row in level1.to_pylist():
        data = read_all(build_subfile(row[names.OFFSET], row[names.SIZE], str(out)))
        assert data == f"{row[names.RELATIVE_PATH]} ".encode() * 7
    assert level1.column(names.RELATIVE_PATH).to_pylist() == [
        f"{f}/{c}" for f in FOLDER_IDS for c in ("x", "y")
    ]


def test_folder_rows_point_at_their_own_meta(tmp_path: Path) -> None:
    taco = _taco(tmp_path)
    out = create(taco, tmp_path / "order.tacozip", quiet=True)[0]
    level0 = verify_zip(out, taco.metadata())[0]
    for row in level0.to_pylist():
        meta_bytes = read_all(build_subfile(row[names.OFFSET], row[names.SIZE], str(out)))
        meta = pq.read_table(pa.BufferReader(meta_bytes))
        for child in meta.to_pylist():
            data = read_all(build_subfile(child[names.OFFSET], child[names.SIZE], str(out)))
            assert data.startswith(f"{row['id']}/{child['id']} ".encode())


def test_handmade_package_deep_and_unsorted(tmp_path: Path) -> None:
    def src(name: str) -> str:
        path = tmp_path / name.replace("/", "_")
        path.write_bytes(name.encode() * 3)
        return str(path)

    tree = [
        (f, [("z", src(f"{f}/z")), ("m", [("q", src(f"{f}/m/q")), ("c", src(f"{f}/m/c"))])])
        for f in ["t2", "t10", "b", "a"]
    ]
    package = package_from_tree(tree)
    from taco_gdal.write import write_folder, write_zip

    verify_zip(write_zip(package, tmp_path / "h.tacozip", quiet=True), package)
    verify_folder(write_folder(package, tmp_path / "h", quiet=True), package)
