"""read(): positions, ids, FOLDER children from __meta__, GDAL paths that open, bytes equal."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import rasterio
from osgeo import gdal

import taco_gdal.read as reader
from taco_gdal.errors import TacoIOError, TacoNavigationError
from taco_gdal.io.vsi import read_all
from taco_gdal.read import TacoDataFrame
from tests.integration.read.conftest import Node, RefDataset


def _walk(frame: TacoDataFrame, nodes: tuple[Node, ...], ref: RefDataset, by_id: bool) -> int:
    assert frame["id"].tolist() == [n.id for n in nodes]
    opened = 0
    for position, node in enumerate(nodes):
        target = frame.read(node.id if by_id else position)
        if node.type == "FILE":
            assert isinstance(target, str)
            assert read_all(target) == ref.source_bytes[node.ids]
            with rasterio.open(target) as src:
                assert src.read(1).shape == (8, 8)
                assert src.crs.to_epsg() == 4326
            handle = gdal.Open(target)
            assert handle is not None and handle.RasterXSize == 8
            handle = None
            opened += 1
        else:
            assert isinstance(target, TacoDataFrame)
            assert target.index.name == "internal:current_id"  # internal:* hidden, as in .data
            opened += _walk(target, node.children, ref, by_id)
    return opened


@pytest.mark.parametrize("by_id", [False, True], ids=["position", "id"])
def test_every_file_opens_and_bytes_equal(ref: RefDataset, by_id: bool) -> None:
    data = reader.load(ref.path).data
    assert _walk(data, ref.tree, ref, by_id) == len(ref.source_bytes)


def test_children_carry_ids_of_the_level_tables(ref: RefDataset) -> None:
    if ref.depth == 0:
        return
    ds = reader.load(ref.path)
    level1 = ds.sql("SELECT * FROM level1").frame(internal=True)
    children = ds.data.read(1)
    expected = level1[level1["internal:parent_id"] == 1]
    assert children["id"].tolist() == expected["id"].tolist()
    assert children.index.tolist() == expected["internal:current_id"].tolist()
    assert children["internal:gdal_vsi"].tolist() == expected["internal:gdal_vsi"].tolist()


def test_unknown_id_names_what_exists(ref: RefDataset) -> None:
    data = reader.load(ref.path).data
    with pytest.raises(TacoNavigationError) as info:
        data.read("nope")
    message = str(info.value)
    assert "'nope'" in message and f"{len(data)} samples" in message
    assert data["id"].iloc[0] in message
    assert isinstance(info.value, KeyError)


def test_position_out_of_range(ref: RefDataset) -> None:
    data = reader.load(ref.path).data
    with pytest.raises(TacoNavigationError, match=rf"position {len(data)} is out of range") as info:
        data.read(len(data))
    assert isinstance(info.value, IndexError)
    last, again = data.read(-1), data.read(len(data) - 1)
    if isinstance(last, str):
        assert last == again
    else:
        assert isinstance(again, TacoDataFrame)
        assert last["internal:gdal_vsi"].tolist() == again["internal:gdal_vsi"].tolist()


def test_bad_key_type(reference: Callable[[str, str], RefDataset]) -> None:
    data = reader.load(reference("flat", "zip").path).data
    with pytest.raises(TacoNavigationError, match=r"position \(int\) or an id \(str\)"):
        data.read(1.5)  # type: ignore[arg-type]


def test_dataset_read_shortcut(reference: Callable[[str, str], RefDataset]) -> None:
    ds = reader.load(reference("2level", "folder").path)
    child = ds.read("tile1")
    assert isinstance(child, TacoDataFrame)
    assert child.read("b").endswith("/DATA/tile1/b")


def test_frame_operations_keep_read(reference: Callable[[str, str], RefDataset]) -> None:
    data = reader.load(reference("3level", "folder").path).data
    for frame in (
        data.copy(),
        data.sort_values("id", ascending=False),
        data.reset_index(drop=True),
    ):
        assert isinstance(frame, TacoDataFrame)
        assert isinstance(frame.read("region1"), TacoDataFrame)


def test_tacocat_source_removed_after_load(
    reference: Callable[[str, str], RefDataset], tmp_path: Path
) -> None:
    ref = reference("2level", "tacocat")
    folder = tmp_path / "cat"
    shutil.copytree(ref.path, folder)
    ds = reader.load(folder)
    data = ds.data
    victim = folder / data["internal:source_file"].iloc[1]
    victim.unlink()
    children = data.read(1)  # from the consolidated level table: the source is not read
    with pytest.raises(TacoIOError) as info, children.open(0):
        pass
    assert victim.name in str(info.value)


def test_read_internal_argument_overrides_what_the_frame_shows(ref: RefDataset) -> None:
    if ref.depth == 0:
        return
    frame = reader.load(ref.path).data  # hides internal:* (but internal:gdal_vsi)
    hidden = frame.read(0)
    shown = frame.read(0, internal=True)
    assert isinstance(hidden, reader.TacoDataFrame) and isinstance(shown, reader.TacoDataFrame)
    assert "internal:offset" not in hidden.columns and "internal:gdal_vsi" in hidden.columns
    assert "internal:offset" in shown.columns or "internal:relative_path" in shown.columns
    assert hidden["id"].tolist() == shown["id"].tolist()
