"""taco_caf: write CAF archives, load them through the entry point, corrupt them, convert them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from osgeo import gdal

import taco_gdal
from taco_caf import CafContainer, CafFormatError, caf_to_taco, write_caf
from taco_caf.layout import FOOTER_SIZE, CafIndex, CafMember, pack_footer, pack_index
from taco_gdal.errors import TacoExistsError, TacoFormatError, TacoValidationError
from taco_gdal.read.opening.containers import registry
from tests.plugins.conftest import assert_same_raster

NAMES = ("tiles/a.tif", "b.tif", "c.tif")


@pytest.fixture
def caf(tmp_path: Path, geotiffs: list[Path]) -> Path:
    return write_caf(dict(zip(NAMES, geotiffs, strict=True)), tmp_path / "tiles.caf")


def _raw(index: bytes, data: bytes = b"") -> bytes:
    return data + index + pack_footer(len(index))


def test_entry_point_makes_caf_a_known_format() -> None:
    assert CafContainer in registry.available()


def test_written_archive_follows_the_spec_layout(caf: Path, geotiffs: list[Path]) -> None:
    raw = caf.read_bytes()
    index_size = int.from_bytes(raw[-FOOTER_SIZE:], "little")
    index = json.loads(raw[-FOOTER_SIZE - index_size : -FOOTER_SIZE])
    assert index["format_version"] == "1.0"
    assert list(index["files"]) == list(NAMES)
    position = 0
    for name, source in zip(NAMES, geotiffs, strict=True):
        entry = index["files"][name]
        assert entry == {"start_byte": position, "end_byte": position + source.stat().st_size}
        assert raw[entry["start_byte"] : entry["end_byte"]] == source.read_bytes()
        position = entry["end_byte"]
    assert position == len(raw) - FOOTER_SIZE - index_size


def test_load_gives_one_file_sample_per_member(caf: Path, geotiffs: list[Path]) -> None:
    ds = taco_gdal.load(caf)
    frame = ds.data
    assert ds.format == "caf"
    assert list(frame["id"]) == list(NAMES)
    assert set(frame["type"]) == {"FILE"} and len(frame) == 3
    assert ds.id == "tiles" and ds.licenses == ["other"] and "Derived" in (ds.description or "")
    for i, source in enumerate(geotiffs):
        path = ds.read(i)
        assert isinstance(path, str) and path.startswith("/vsisubfile/")
        assert path.endswith(f",{caf}")
        assert_same_raster(path, source)
    assert ds.read("b.tif") == ds.read(1)


def test_a_list_of_files_is_named_by_base_name(tmp_path: Path, geotiffs: list[Path]) -> None:
    out = write_caf(geotiffs, tmp_path / "plain.caf")
    assert list(taco_gdal.load(out).data["id"]) == [p.name for p in geotiffs]


def test_load_reads_through_gdal_vsi(caf: Path, geotiffs: list[Path], vsimem_dir: str) -> None:
    target = f"{vsimem_dir}/tiles.caf"
    gdal.FileFromMemBuffer(target, caf.read_bytes())
    ds = taco_gdal.load(target)
    assert len(ds.data) == 3
    assert_same_raster(str(ds.read(2)), geotiffs[2])


@pytest.mark.network
def test_load_over_http(caf: Path, geotiffs: list[Path]) -> None:
    from tests.support.servers.range_server import RangeServer

    with RangeServer(root=caf.parent) as server:
        ds = taco_gdal.load(f"{server.url}/{caf.name}")
        # footer and index come back from one range read at the end of the archive
        assert server.log.count(f"/{caf.name}", "GET") == 1, server.log.describe()
        path = str(ds.read(0))
        assert path.startswith("/vsisubfile/") and "/vsicurl/http://127.0.0.1" in path
        assert_same_raster(path, geotiffs[0])
        gdal.VSICurlClearCache()


# --- corrupt archives --------------------------------------------------------------------------
def _corrupt(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "bad.caf"
    path.write_bytes(data)
    return path


def _load_error(path: Path) -> str:
    with pytest.raises(TacoFormatError) as info:
        taco_gdal.load(path)
    assert isinstance(info.value, CafFormatError)
    message = str(info.value)
    assert str(path) in message
    return message


def test_shorter_than_a_footer(tmp_path: Path) -> None:
    message = _load_error(_corrupt(tmp_path, b"\x01\x00"))
    assert "4-byte footer" in message and "2 bytes" in message


def test_truncated_footer(caf: Path, tmp_path: Path) -> None:
    message = _load_error(_corrupt(tmp_path, caf.read_bytes()[:-2]))
    assert "announces" in message  # the last 4 bytes are now JSON text, read as a huge size


def test_index_size_beyond_file(tmp_path: Path) -> None:
    index = pack_index(CafIndex((CafMember("a", 0, 1),)))
    data = b"x" + index + pack_footer(len(index) + 10)
    message = _load_error(_corrupt(tmp_path, data))
    assert f"{len(index) + 10}-byte index" in message and f"file size {len(data)}" in message


@pytest.mark.parametrize(
    ("index", "expected"),
    [
        (b"not json", "UTF-8 JSON"),
        (b"[1, 2]", "JSON object"),
        (b'{"format_version": "2.0", "files": {}}', "format_version"),
        (b'{"format_version": "1.0", "files": []}', "'files'"),
        (b'{"format_version": "1.0", "files": {"a": {"start_byte": 0}}}', "integer"),
        (b'{"format_version":"1.0","files":{"a":{"start_byte":0,"end_byte":9}}}', "0..9"),
        (b'{"format_version":"1.0","files":{"a":{"start_byte":2,"end_byte":1}}}', "2..1"),
        (
            b'{"format_version":"1.0","files":{"a":{"start_byte":0,"end_byte":1},'
            b'"a":{"start_byte":1,"end_byte":2}}}',
            "appears twice",
        ),
        (b'{"format_version":"1.0","files":{}}', "lists no files"),
    ],
)
def test_bad_index(tmp_path: Path, index: bytes, expected: str) -> None:
    message = _load_error(_corrupt(tmp_path, _raw(index, b"xy")))
    assert expected in message


# --- writer ------------------------------------------------------------------------------------
def test_writer_refuses_repeated_names_and_existing_output(caf: Path, geotiffs: list[Path]) -> None:
    with pytest.raises(TacoValidationError, match="repeated"):
        write_caf([geotiffs[0], geotiffs[0]], caf.parent / "dup.caf")
    with pytest.raises(TacoValidationError, match="at least one file"):
        write_caf([], caf.parent / "empty.caf")
    with pytest.raises(TacoExistsError):
        write_caf(geotiffs, caf)
    assert not (caf.parent / "dup.caf").exists()
    assert write_caf(geotiffs, caf, overwrite=True) == caf


# --- conversion --------------------------------------------------------------------------------
def test_caf_to_taco_copies_every_member(caf: Path, geotiffs: list[Path], tmp_path: Path) -> None:
    out = caf_to_taco(caf, tmp_path / "tiles.tacozip", quiet=True)
    ds = taco_gdal.load(out)
    frame = ds.data
    assert ds.format == "zip" and ds.id == "tiles"
    assert list(frame["id"]) == ["tiles_a.tif", "b.tif", "c.tif"]
    assert list(frame["member"]) == list(NAMES)
    for i, source in enumerate(geotiffs):
        path = str(ds.read(i))
        assert path.endswith(f",{out}")
        assert_same_raster(path, source)


def test_caf_to_taco_reads_any_gdal_path(
    caf: Path, geotiffs: list[Path], tmp_path: Path, vsimem_dir: str
) -> None:
    remote = f"{vsimem_dir}/tiles.caf"
    gdal.FileFromMemBuffer(remote, caf.read_bytes())
    out = caf_to_taco(remote, tmp_path / "x.tacozip", dataset_id="from-memory", quiet=True)
    ds = taco_gdal.load(out)
    assert ds.id == "from-memory"
    assert_same_raster(str(ds.read(1)), geotiffs[1])


def test_caf_to_taco_rejects_a_name_that_cannot_be_an_id(
    tmp_path: Path, geotiffs: list[Path]
) -> None:
    caf = write_caf({"__init__.tif": geotiffs[0]}, tmp_path / "odd.caf")
    with pytest.raises(TacoValidationError, match=r"'__init__\.tif' cannot become a TACO sample"):
        caf_to_taco(caf, tmp_path / "odd.tacozip", quiet=True)
    assert not (tmp_path / "odd.tacozip").exists()


def test_archive_copied_elsewhere_still_loads(caf: Path, tmp_path: Path) -> None:
    moved = tmp_path / "moved" / "x.CAF"
    moved.parent.mkdir()
    shutil.copy(caf, moved)
    assert taco_gdal.load(moved).format == "caf"
