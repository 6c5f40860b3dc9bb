"""taco_taridx: index tar shards, load the index through the entry point, corrupt it, convert."""

from __future__ import annotations

import struct
import tarfile
from pathlib import Path

import numpy as np
import pytest
from osgeo import gdal

import taco_gdal
import taco_taridx.container
import taco_taridx.write
from taco_gdal.errors import TacoExistsError, TacoFormatError, TacoValidationError
from taco_gdal.read.opening.containers import registry
from taco_taridx import (
    TarIdxContainer,
    TaridxFormatError,
    build_index,
    read_taridx,
    tar_to_taco,
    write_taridx,
)
from taco_taridx.layout import HEADER_SIZE, MAGIC, ROW_SIZE, TAR_BLOCK, parse_index
from taco_taridx.members import key_hash
from tests.plugins.conftest import assert_same_raster

# webdataset-style: two members per sample key
MEMBERS = ("s000.tif", "s000.mask.tif", "s001.tif", "s001.mask.tif", "s002.tif", "s002.mask.tif")


def _tar(path: Path, members: dict[str, Path], fmt: int = tarfile.PAX_FORMAT) -> Path:
    with tarfile.open(path, "w", format=fmt) as tar:
        for name, source in members.items():
            tar.add(source, arcname=name)
    return path


@pytest.fixture
def sources(geotiffs: list[Path]) -> dict[str, Path]:
    """Member name -> the GeoTIFF stored under it."""
    return {name: geotiffs[(i + i // 2) % 3] for i, name in enumerate(MEMBERS)}


@pytest.fixture
def taridx(tmp_path: Path, sources: dict[str, Path]) -> Path:
    """``train.tar`` and its ``train.taridx``."""
    tar = _tar(tmp_path / "train.tar", sources)
    return write_taridx(tar, tmp_path / "train.taridx")


def test_entry_point_makes_taridx_a_known_format() -> None:
    assert TarIdxContainer in registry.available()


def test_index_follows_the_spec_layout(taridx: Path, sources: dict[str, Path]) -> None:
    raw = taridx.read_bytes()
    assert raw[:8] == MAGIC
    major, minor, rec, hdr, n_stems, n_rows, n_ext, n_crash, off_crash, off_arr, flags = (
        struct.unpack_from("<HHHHQQIIQQB", raw, 8)
    )
    assert (major, minor, rec, hdr) == (1, 0, ROW_SIZE, HEADER_SIZE)
    assert (n_stems, n_rows, n_ext, n_crash) == (3, 6, 2, 0)
    assert raw[HEADER_SIZE:off_crash] == b"tif\nmask.tif" and off_crash == off_arr
    assert flags & 1  # rows of one stem are contiguous
    assert len(raw) == off_arr + n_rows * ROW_SIZE
    tar = (taridx.parent / "train.tar").read_bytes()
    for i, name in enumerate(MEMBERS):
        fid, offset, size, extid, crashid, keyhash = struct.unpack_from(
            "<HQQHIQ", raw, off_arr + i * ROW_SIZE
        )
        assert (fid, crashid, extid) == (0, 0, i % 2)
        assert keyhash == key_hash(name.split(".")[0])
        assert tar[offset : offset + 100].rstrip(b"\0") == name.encode()
        assert tar[offset + TAR_BLOCK : offset + TAR_BLOCK + size] == sources[name].read_bytes()


def test_load_gives_one_file_sample_per_member(taridx: Path, sources: dict[str, Path]) -> None:
    ds = taco_gdal.load(taridx)
    frame = ds.data
    assert ds.format == "taridx" and ds.id == "train"
    assert list(frame["id"]) == list(MEMBERS)
    assert set(frame["type"]) == {"FILE"}
    assert list(frame["key"]) == ["s000", "s000", "s001", "s001", "s002", "s002"]
    assert list(frame["ext"]) == ["tif", "mask.tif"] * 3
    for i, name in enumerate(MEMBERS):
        path = str(ds.read(i))
        assert path.endswith(f",{taridx.parent / 'train.tar'}")
        assert_same_raster(path, sources[name])
    sample = ds.sql("SELECT * FROM data WHERE key = 's001'").data
    assert list(sample["id"]) == ["s001.tif", "s001.mask.tif"]


def test_detected_by_magic_without_the_suffix(taridx: Path, tmp_path: Path) -> None:
    alias = tmp_path / "train"  # the shard name still follows the index's name: train.tar
    alias.write_bytes(taridx.read_bytes())
    assert taco_gdal.load(alias).format == "taridx"


def test_several_shards_in_fold_layout(tmp_path: Path, sources: dict[str, Path]) -> None:
    names = list(sources)
    shards = [
        _tar(tmp_path / "val_0000.tar", {n: sources[n] for n in names[:4]}),
        _tar(tmp_path / "val_0001.tar", {n: sources[n] for n in names[4:]}, tarfile.GNU_FORMAT),
    ]
    index = write_taridx(shards, tmp_path / "val.taridx")
    rows = read_taridx(str(index)).rows
    assert list(rows["fid"]) == [0, 0, 0, 0, 1, 1]
    ds = taco_gdal.load(index)
    assert list(ds.data["internal:source_file"]) == ["val_0000.tar"] * 4 + ["val_0001.tar"] * 2
    assert_same_raster(str(ds.read(5)), sources[names[5]])


def test_load_reads_through_gdal_vsi(
    taridx: Path, sources: dict[str, Path], vsimem_dir: str
) -> None:
    for name in ("train.taridx", "train.tar"):
        gdal.FileFromMemBuffer(f"{vsimem_dir}/{name}", (taridx.parent / name).read_bytes())
    ds = taco_gdal.load(f"{vsimem_dir}/train.taridx")
    path = str(ds.read(3))
    assert path == f"/vsisubfile/{int(ds.frame(internal=True)['internal:offset'][3])}_" + (
        f"{sources[MEMBERS[3]].stat().st_size},{vsimem_dir}/train.tar"
    )
    assert_same_raster(path, sources[MEMBERS[3]])


@pytest.mark.network
def test_load_over_http(taridx: Path, sources: dict[str, Path]) -> None:
    from tests.support.servers.range_server import RangeServer

    with RangeServer(root=taridx.parent) as server:
        ds = taco_gdal.load(f"{server.url}/{taridx.name}")
        # the six 512-byte headers are neighbours: one range read fetches them all
        assert server.log.count("/train.tar", "GET") == 1, server.log.describe()
        path = str(ds.read(1))
        assert "/vsicurl/http://127.0.0.1" in path
        assert_same_raster(path, sources[MEMBERS[1]])
        gdal.VSICurlClearCache()


def test_stem_collisions_use_the_crash_table(
    tmp_path: Path, sources: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every stem hashed to one value: the first stem is canonical, the others get crash ids."""

    def same_hash(stem: str) -> int:
        return 7

    monkeypatch.setattr(taco_taridx.write, "key_hash", same_hash)
    monkeypatch.setattr(taco_taridx.container, "key_hash", same_hash)
    index = write_taridx(_tar(tmp_path / "c.tar", sources), tmp_path / "c.taridx")
    parsed = read_taridx(str(index))
    assert parsed.crash_stems == ("s001", "s002")
    assert list(parsed.rows["crashid"]) == [0, 0, 1, 1, 2, 2]
    assert list(taco_gdal.load(index).data["key"]) == [
        "s000",
        "s000",
        "s001",
        "s001",
        "s002",
        "s002",
    ]


def test_members_named_only_in_a_long_name_header_are_refused(
    tmp_path: Path, geotiffs: list[Path]
) -> None:
    name = "d" * 120 + ".tif"
    tar = _tar(tmp_path / "long.tar", {name: geotiffs[0]}, tarfile.GNU_FORMAT)
    with pytest.raises(TaridxFormatError, match="long names"):
        build_index(tar)


def test_writer_refuses_an_existing_output_and_compressed_tars(
    taridx: Path, tmp_path: Path, sources: dict[str, Path]
) -> None:
    with pytest.raises(TacoExistsError):
        write_taridx(taridx.parent / "train.tar", taridx)
    gz = tmp_path / "x.tar.gz"
    with tarfile.open(gz, "w:gz") as tar:
        tar.add(sources[MEMBERS[0]], arcname=MEMBERS[0])
    with pytest.raises(TaridxFormatError, match="uncompressed tar"):
        build_index(gz)


# --- corrupt indexes -----------------------------------------------------------------------------
def _load_error(path: Path) -> str:
    with pytest.raises(TacoFormatError) as info:
        taco_gdal.load(path)
    assert isinstance(info.value, TaridxFormatError)
    message = str(info.value)
    assert str(path) in message
    return message


def _patched(taridx: Path, offset: int, fmt: str, value: int) -> Path:
    raw = bytearray(taridx.read_bytes())
    struct.pack_into(fmt, raw, offset, value)
    taridx.write_bytes(bytes(raw))
    return taridx


def test_bad_magic(taridx: Path) -> None:
    raw = taridx.read_bytes()
    taridx.write_bytes(b"TARIDY\0\0" + raw[8:])
    assert "expected magic" in _load_error(taridx)


def test_unknown_major_version(taridx: Path) -> None:
    assert "major version 2" in _load_error(_patched(taridx, 8, "<H", 2))


def test_bad_row_count(taridx: Path) -> None:
    message = _load_error(_patched(taridx, 24, "<Q", 7))  # n_rows
    assert "counts 7 rows" in message and "6 rows" in message


def test_truncated_rows(taridx: Path) -> None:
    taridx.write_bytes(taridx.read_bytes()[:-5])
    assert "truncated or inconsistent" in _load_error(taridx)


def test_row_array_offset_beyond_file(taridx: Path) -> None:
    assert "off_arr" in _load_error(_patched(taridx, 48, "<Q", 10_000))


def test_extension_count_mismatch(taridx: Path) -> None:
    assert "counts 3 extension entries" in _load_error(_patched(taridx, 32, "<I", 3))


def test_short_header(tmp_path: Path) -> None:
    path = tmp_path / "short.taridx"
    path.write_bytes(MAGIC + b"\0" * 10)
    assert "64-byte header" in _load_error(path)


def test_extension_id_out_of_range(taridx: Path) -> None:
    header = parse_index(taridx.read_bytes(), "x")
    off_arr = HEADER_SIZE + len(b"tif\nmask.tif")
    assert len(header.rows) == 6
    message = _load_error(_patched(taridx, off_arr + ROW_SIZE + 18, "<H", 5))  # row 1 extid
    assert "row 1 has extid=5" in message


def test_index_of_another_tar(taridx: Path, sources: dict[str, Path]) -> None:
    shuffled = dict(reversed(list(sources.items())))
    _tar(taridx.parent / "train.tar", shuffled)
    message = _load_error(taridx)
    assert "does not describe this tar" in message and "train.tar" in message


def test_offset_that_is_not_a_tar_header(taridx: Path) -> None:
    off_arr = HEADER_SIZE + len(b"tif\nmask.tif")
    message = _load_error(_patched(taridx, off_arr + 2, "<Q", TAR_BLOCK + 7))  # row 0 offset
    assert "expected a 512-byte tar header" in message


def test_missing_shard(taridx: Path) -> None:
    (taridx.parent / "train.tar").unlink()
    message = _load_error(taridx)
    assert "train.tar" in message and "train_*.tar" in message


def test_empty_index(tmp_path: Path) -> None:
    empty = _tar(tmp_path / "e.tar", {})
    index = write_taridx(empty, tmp_path / "e.taridx")
    assert "no rows" in _load_error(index)


# --- conversion ----------------------------------------------------------------------------------
def test_tar_to_taco_copies_every_member(
    taridx: Path, sources: dict[str, Path], tmp_path: Path
) -> None:
    out = tar_to_taco(taridx, tmp_path / "train.tacozip", quiet=True)
    ds = taco_gdal.load(out)
    frame = ds.data
    assert ds.format == "zip" and ds.id == "train"
    assert list(frame["id"]) == list(MEMBERS) and list(frame["member"]) == list(MEMBERS)
    assert list(frame["key"]) == ["s000", "s000", "s001", "s001", "s002", "s002"]
    for i, name in enumerate(MEMBERS):
        path = str(ds.read(i))
        assert path.endswith(f",{out}")
        assert_same_raster(path, sources[name])


def test_tar_to_taco_refuses_repeated_member_names(tmp_path: Path, geotiffs: list[Path]) -> None:
    tar = tmp_path / "twice.tar"
    with tarfile.open(tar, "w") as archive:
        archive.add(geotiffs[0], arcname="a.tif")
        archive.add(geotiffs[1], arcname="a.tif")
    index = write_taridx(tar, tmp_path / "twice.taridx")
    assert np.array_equal(read_taridx(str(index)).rows["crashid"], [0, 0])
    with pytest.raises(TacoValidationError):
        tar_to_taco(index, tmp_path / "twice.tacozip", quiet=True)
