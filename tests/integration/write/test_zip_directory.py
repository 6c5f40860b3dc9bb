"""ZipWriter spools a large central directory to a temporary file; the archive is the same."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from taco_gdal.format.header import HeaderEntry
from taco_gdal.io.header import read_header
from taco_gdal.write import zipstream
from taco_gdal.write.zipstream import ZipWriter


def _write(path: Path) -> None:
    with open(path, "wb") as f:
        writer = ZipWriter(f, mtime=0)
        writer.add_taco_header()
        infos = [writer.add_bytes(f"DATA/m{i:04d}", f"member {i}".encode()) for i in range(300)]
        writer.set_header_entries([HeaderEntry(infos[-1].data_offset, infos[-1].size)])
        writer.close()


def test_spooled_directory_gives_the_same_archive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path / "memory.zip")
    monkeypatch.setattr(zipstream, "CENTRAL_IN_MEMORY", 256)  # 300 entries spill to disk
    _write(tmp_path / "spooled.zip")
    assert (tmp_path / "spooled.zip").read_bytes() == (tmp_path / "memory.zip").read_bytes()
    with zipfile.ZipFile(tmp_path / "spooled.zip") as archive:
        assert archive.testzip() is None  # every CRC, the patched TACO_HEADER's included
        assert len(archive.namelist()) == 301
        assert archive.read("DATA/m0299") == b"member 299"
    assert read_header(str(tmp_path / "spooled.zip")).entries[0].length == len(b"member 299")
