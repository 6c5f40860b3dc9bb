"""load(): every form of every container, paths of every kind, metadata properties."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import taco_gdal.read as reader
from taco_gdal.errors import TacoFormatError, TacoIOError, TacoValidationError
from taco_gdal.io.vsi import VSIFile
from tests.integration.read.conftest import RefDataset
from tests.support.datasets import write_dataset


def test_detects_format(ref: RefDataset) -> None:
    ds = reader.load(ref.path)
    expected = "tacocat" if ref.format.startswith("tacocat") else ref.format
    assert ds.format == expected
    assert ds.max_depth == ref.depth


def test_collection_properties(ref: RefDataset) -> None:
    ds = reader.load(ref.path)
    assert ds.id == f"ref_{ref.shape}"
    assert ds.version == "0.1.0"
    assert ds.description == f"reference-writer dataset, shape {ref.shape}"
    assert ds.title == f"Reference {ref.shape}"
    assert ds.tasks == ["classification"]
    assert ds.licenses == ["CC-BY-4.0"]
    assert ds.keywords == ["reference", ref.shape]
    assert ds.providers[0]["name"] == "taco_gdal tests"
    assert ds.curators == []
    assert ds.pit_schema["root"]["type"] == ("FILE" if ref.shape == "flat" else "FOLDER")
    assert set(ds.field_schema) == {f"level{k}" for k in range(ref.depth + 1)}
    assert ds.extent is not None and len(ds.extent["spatial"]) == 4
    assert ds.collection["id"] == ds.id
    ds.collection["id"] = "changed"  # a copy
    assert ds.id == f"ref_{ref.shape}"


def test_accepts_str_path_and_vsi(reference: Callable[[str, str], RefDataset]) -> None:
    zipped = reference("2level", "zip").path
    for given in (zipped, str(zipped), f"file://{zipped}", str(zipped)):
        assert len(reader.load(given).data) == 3
    relative = reader.load(
        Path(zipped).relative_to(Path.cwd()) if zipped.is_relative_to(Path.cwd()) else zipped
    )
    assert len(relative.data) == 3


def test_zip_detected_by_content_without_suffix(
    reference: Callable[[str, str], RefDataset], tmp_path: Path
) -> None:
    renamed = tmp_path / "dataset.bin"
    renamed.write_bytes(reference("flat", "zip").path.read_bytes())
    ds = reader.load(renamed)
    assert ds.format == "zip"
    assert ds.data["internal:gdal_vsi"][0].endswith(f",{renamed}")


def test_binary_tacocat_detected_by_content(
    reference: Callable[[str, str], RefDataset], tmp_path: Path
) -> None:
    binary = reference("2level", "tacocat-binary").path
    renamed = binary.parent / "catalog.bin"
    renamed.write_bytes(binary.read_bytes())
    ds = reader.load(renamed)
    assert ds.format == "tacocat"
    assert len(ds.data) == 3


def test_list_is_concatenated(reference: Callable[[str, str], RefDataset]) -> None:
    path = reference("2level", "zip").path
    both = reader.load([path, path])
    assert len(both.data) == 6
    assert reader.load([path]).format == "zip"


def test_empty_list_raises() -> None:
    with pytest.raises(TacoValidationError, match="non-empty list"):
        reader.load([])


def test_missing_path_raises(tmp_path: Path) -> None:
    with pytest.raises(TacoIOError, match="no such file or folder"):
        reader.load(tmp_path / "nothing.here")


def test_not_a_taco(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("hello")
    with pytest.raises(TacoFormatError, match="not a TACO dataset"):
        reader.load(tmp_path / "x.txt")
    with pytest.raises(TacoFormatError, match="found a folder"):
        reader.load(tmp_path)


def test_base_path_only_for_tacocat(reference: Callable[[str, str], RefDataset]) -> None:
    with pytest.raises(TacoValidationError, match="TACOCAT"):
        reader.load(reference("flat", "zip").path, base_path="/tmp")


def test_base_path_moves_the_zips(
    reference: Callable[[str, str], RefDataset], tmp_path: Path
) -> None:
    cat = reference("2level", "tacocat")
    index = tmp_path / "index"
    (index / ".tacocat").mkdir(parents=True)
    for item in (cat.path / ".tacocat").iterdir():
        (index / ".tacocat" / item.name).write_bytes(item.read_bytes())
    ds = reader.load(index / ".tacocat", base_path=cat.path)
    vsi = ds.data["internal:gdal_vsi"].tolist()
    assert all(v.startswith("/vsisubfile/") and f",{cat.path}/" in v for v in vsi)
    with pytest.raises(TacoIOError, match="source ZIP"):
        reader.load(index / ".tacocat")


def test_repr_and_html(reference: Callable[[str, str], RefDataset]) -> None:
    ds = reader.load(reference("3level", "zip").path).filter_bbox(0, -90, 180, 90)
    text = repr(ds)
    assert "ref_3level" in text and "level2" in text and "filter_bbox" in text
    page = ds._repr_html_()
    assert page.startswith("<style>") and "ref_3level" in page and "<li>" in page
    assert "<script" not in page


def test_collection_json_is_what_was_written(reference: Callable[[str, str], RefDataset]) -> None:
    folder = reference("flat", "folder").path
    assert reader.load(folder).collection == json.loads((folder / "COLLECTION.json").read_text())


@pytest.mark.parametrize("fmt", ["zip", "tacocat-binary"])
def test_archive_opens_with_two_reads(
    reference: Callable[[str, str], RefDataset], monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    """The first bytes (header), then one range over every metadata member; no central directory."""
    path = reference("3level", fmt).path
    reads: list[tuple[str, int, int]] = []
    original = VSIFile.read_at

    def counting(self: VSIFile, offset: int, size: int) -> bytes:
        reads.append((self.path, offset, size))
        return original(self, offset, size)

    monkeypatch.setattr(VSIFile, "read_at", counting)
    reader.load(path)
    assert [r[1] for r in reads][:1] == [0] and len(reads) == 2, reads
    end = reads[1][1] + reads[1][2]
    if fmt == "zip":
        with zipfile.ZipFile(path) as archive:
            collection = archive.getinfo("COLLECTION.json")
            first = archive.getinfo("METADATA/level0.parquet")
        assert end == collection.header_offset + 30 + len("COLLECTION.json") + collection.file_size
        assert reads[1][1] == first.header_offset + 30 + len("METADATA/level0.parquet")
    else:
        assert end == path.stat().st_size


def test_plain_zip_is_not_a_taco(tmp_path: Path) -> None:
    target = tmp_path / "plain.zip"
    with zipfile.ZipFile(target, "w") as archive:
        archive.writestr("hello.txt", "hi")
    with pytest.raises(TacoFormatError, match=rf"{target}: not a TACO ZIP.*TACO_HEADER"):
        reader.load(target)


def test_level_columns_are_one_chunk(tmp_path: Path) -> None:
    """Arrow's take on a many-chunk column joins the chunks first: navigation would be O(level)."""
    path = write_dataset(tmp_path, "3level", "folder")
    for level in (0, 1):  # stored in row groups of two rows
        stored = path / "METADATA" / f"level{level}.parquet"
        pq.write_table(pq.read_table(stored), stored, row_group_size=2)
    assert pq.ParquetFile(path / "METADATA" / "level1.parquet").num_row_groups > 1
    ds = reader.load(path)
    for table in ds.state.base.tables:
        assert all(column.num_chunks <= 1 for column in table.columns), table.schema
