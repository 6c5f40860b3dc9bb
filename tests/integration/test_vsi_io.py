"""Byte-range reads through GDAL's VSI layer."""

from __future__ import annotations

import pytest

from taco_gdal.errors import TacoFormatError, TacoIOError
from taco_gdal.format.vsi import build_subfile
from taco_gdal.io.vsi import VSIFile, file_size, read_all, read_range


def test_local_and_subfile_ranges(tmp_path):
    path = tmp_path / "a,b.bin"
    data = bytes(range(256)) * 40
    path.write_bytes(data)
    assert read_range(str(path), 100, 50) == data[100:150]
    assert file_size(str(path)) == len(data)
    sub = build_subfile(1000, 300, str(path))
    assert read_all(sub) == data[1000:1300]
    assert read_range(sub, 10, 5) == data[1010:1015]


def test_short_read_is_a_format_error(tmp_path):
    path = tmp_path / "s.bin"
    path.write_bytes(b"x" * 10)
    with pytest.raises(TacoFormatError, match=r"s.bin: metadata expected 20 bytes at offset 5"):
        read_range(str(path), 5, 20, "metadata")


def test_missing_file_is_an_io_error(tmp_path):
    with pytest.raises(TacoIOError, match="cannot open") as info:
        read_range(str(tmp_path / "nope.bin"), 0, 1)
    assert isinstance(info.value, OSError)
    with pytest.raises(TacoIOError, match="does not exist"):
        file_size(str(tmp_path / "nope.bin"))


def test_vsimem_write_and_read(vsimem_dir):
    path = f"{vsimem_dir}/w.bin"
    with VSIFile(path, "wb") as f:
        f.write_at(0, b"hello world")
    with VSIFile(path, "r+b") as f:
        f.write_at(6, b"WORLD")
    assert read_all(path) == b"hello WORLD"
