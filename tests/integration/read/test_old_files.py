"""Files written before tacotoolbox 0.21: no internal:current_id (ids come from positions)."""

from __future__ import annotations

import io
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import taco_gdal.read as reader
from taco_gdal.format.header import HeaderEntry, TacoHeader, serialize_header
from taco_gdal.io.vsi import read_all
from taco_gdal.read import TacoDataFrame
from tests.integration.read.conftest import RefDataset

Reference = Callable[[str, str], RefDataset]
METADATA = ("METADATA/level0.parquet", "METADATA/level1.parquet", "METADATA/level2.parquet")


def _without(data: bytes, columns: list[str]) -> bytes:
    table = pq.read_table(io.BytesIO(data))
    sink = io.BytesIO()
    pq.write_table(table.drop_columns([c for c in columns if c in table.column_names]), sink)
    return sink.getvalue()


def rewrite_zip(source: Path, target: Path, columns: list[str]) -> Path:
    """Copy a TACO ZIP member by member (same layout), dropping columns from METADATA/."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as new:
        for info in old.infolist():
            data = old.read(info)
            if info.filename in METADATA:
                data = _without(data, columns)
            new.writestr(info.filename, data)
    out = bytearray(buffer.getvalue())
    entries = []
    with zipfile.ZipFile(io.BytesIO(bytes(out))) as archive:
        for name in [*METADATA, "COLLECTION.json"]:
            if name in archive.namelist():
                info = archive.getinfo(name)
                entries.append(HeaderEntry(info.header_offset + 30 + len(name), info.file_size))
    out[:157] = serialize_header(TacoHeader(tuple(entries)))
    target.write_bytes(bytes(out))
    return target


def _walk(frame: TacoDataFrame, ref: RefDataset, ids: tuple[str, ...] = ()) -> int:
    count = 0
    for position, name in enumerate(frame["id"]):
        target = frame.read(position)
        if isinstance(target, str):
            assert read_all(target) == ref.source_bytes[(*ids, name)]
            count += 1
        else:
            count += _walk(target, ref, (*ids, name))
    return count


@pytest.mark.parametrize("shape", ["2level", "3level"])
def test_zip_without_current_id(reference: Reference, tmp_path: Path, shape: str) -> None:
    ref = reference(shape, "zip")
    old = rewrite_zip(ref.path, tmp_path / "old.tacozip", ["internal:current_id"])
    ds = reader.load(old)
    assert _walk(ds.data, ref) == len(ref.source_bytes)
    level = ref.depth
    target = ref.level(level)[-1]
    x, y = target.centroid
    hit = ds.filter_bbox(x - 0.1, y - 0.1, x + 0.1, y + 0.1, level=level)
    assert hit.data["id"].tolist() == [target.ids[0]]
    last = ds.sql(f"SELECT * FROM level{level}").frame(internal=True)
    assert last["internal:current_id"].tolist() == list(range(len(ref.level(level))))


def test_folder_without_current_or_parent_id(reference: Reference, tmp_path: Path) -> None:
    ref = reference("3level", "folder")
    folder = tmp_path / "old"
    shutil.copytree(ref.path, folder)
    for level in range(3):
        path = folder / "METADATA" / f"level{level}.parquet"
        path.write_bytes(_without(path.read_bytes(), ["internal:current_id", "internal:parent_id"]))
    ds = reader.load(folder)
    bands = ds.sql(
        "SELECT r.id AS region, s.id AS sensor, b.id AS band FROM level2 b JOIN level1 s ON "
        'b."internal:parent_id" = s."internal:current_id" JOIN level0 r ON '
        's."internal:parent_id" = r."internal:current_id" ORDER BY b."internal:current_id"'
    ).data
    assert [tuple(row) for row in bands.itertuples(index=False)] == [n.ids for n in ref.level(2)]
    assert _walk(ds.data, ref) == len(ref.source_bytes)


NO_LINKS = ["internal:current_id", "internal:parent_id", "internal:relative_path"]


@pytest.mark.parametrize("fmt", ["zip", "tacocat"])
def test_parents_from_meta_grouping(reference: Reference, tmp_path: Path, fmt: str) -> None:
    """Neither parent_id nor relative_path: children are counted from the __meta__ files."""
    ref = reference("3level", fmt)
    if fmt == "zip":
        target = rewrite_zip(ref.path, tmp_path / "bare.tacozip", NO_LINKS)
    else:
        target = tmp_path / "bare"
        shutil.copytree(ref.path, target)
        for level in range(3):
            path = target / ".tacocat" / f"level{level}.parquet"
            path.write_bytes(_without(path.read_bytes(), NO_LINKS))
    ds = reader.load(target)
    level2 = ds.sql("SELECT * FROM level2").frame(internal=True)
    parents = {n.position: i for i, n in enumerate(ref.level(1))}
    assert level2["internal:parent_id"].tolist() == [parents[n.position[:-1]] for n in ref.level(2)]
    assert _walk(ds.data, ref) == len(ref.source_bytes)
    target_node = ref.level(2)[7]
    x, y = target_node.centroid
    hit = ds.filter_bbox(x - 0.1, y - 0.1, x + 0.1, y + 0.1, level=2).data
    assert hit["id"].tolist() == [target_node.ids[0]]
    assert hit.read(0)["id"].tolist() == [target_node.ids[1]]
