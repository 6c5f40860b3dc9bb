"""In-place TACO_HEADER updates on real files, checked by Python's zipfile and Info-ZIP's unzip."""

from __future__ import annotations

import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import pytest

from taco_gdal.errors import TacoFormatError
from taco_gdal.format.header import HeaderEntry
from taco_gdal.io.header import read_header, update_header
from taco_gdal.write.zipstream import ZipWriter


def _write_taco_zip(path: Path, members: dict[str, bytes]) -> None:
    with open(path, "wb") as f:
        w = ZipWriter(f)
        w.add_taco_header()
        infos = [w.add_bytes(name, data) for name, data in members.items()]
        w.set_header_entries([HeaderEntry(i.data_offset, i.size) for i in infos[-2:]])
        w.close()


def _check_with_zip_tools(path: Path) -> None:
    py = subprocess.run(
        [sys.executable, "-m", "zipfile", "-t", str(path)], capture_output=True, text=True
    )
    assert py.returncode == 0, py.stdout + py.stderr
    assert "Done testing" in py.stdout
    uz = subprocess.run(["unzip", "-t", str(path)], capture_output=True, text=True)
    assert uz.returncode == 0, uz.stdout + uz.stderr
    assert "No errors detected" in uz.stdout


def _crcs(path: Path) -> tuple[int, int, int]:
    raw = path.read_bytes()
    payload_crc = zlib.crc32(raw[41:157])
    lfh_crc = int.from_bytes(raw[14:18], "little")
    with zipfile.ZipFile(path) as zf:
        cd_crc = zf.getinfo("TACO_HEADER").CRC
    return payload_crc, lfh_crc, cd_crc


@pytest.fixture
def taco_zip(tmp_path: Path) -> Path:
    path = tmp_path / "x.tacozip"
    _write_taco_zip(
        path,
        {"DATA/a": b"A" * 1000, "METADATA/level0.parquet": b"P" * 50, "COLLECTION.json": b"{}"},
    )
    return path


def test_written_taco_zip_is_valid_zip(taco_zip: Path):
    _check_with_zip_tools(taco_zip)
    header = read_header(str(taco_zip))
    with zipfile.ZipFile(taco_zip) as zf:
        names = zf.namelist()
        assert names[0] == "TACO_HEADER"
        info = zf.getinfo("COLLECTION.json")
    assert header.entries[-1].length == 2
    assert taco_zip.read_bytes()[header.entries[-1].offset :][:2] == b"{}"
    assert info.header_offset + 30 + len("COLLECTION.json") == header.entries[-1].offset
    payload_crc, lfh_crc, cd_crc = _crcs(taco_zip)
    assert payload_crc == lfh_crc == cd_crc


def test_update_in_place_uses_three_writes_and_keeps_zip_valid(taco_zip: Path):
    before = taco_zip.read_bytes()
    new = [HeaderEntry(7, 8), HeaderEntry(2**40, 3), HeaderEntry(1, 1)]
    writes = update_header(str(taco_zip), new)
    after = taco_zip.read_bytes()

    assert [(w.offset, len(w.data)) for w in writes][:2] == [(41, 116), (14, 4)]
    assert len(writes) == 3 and len(writes[2].data) == 4
    assert sum(len(w.data) for w in writes) == 124
    # every changed byte lies inside one of the three writes
    changed = {i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b}
    covered = {w.offset + k for w in writes for k in range(len(w.data))}
    assert changed and changed <= covered
    assert len(before) == len(after)

    assert read_header(str(taco_zip)).entries == tuple(new)
    payload_crc, lfh_crc, cd_crc = _crcs(taco_zip)
    assert payload_crc == lfh_crc == cd_crc
    _check_with_zip_tools(taco_zip)


def test_update_on_plain_zip_leaves_file_identical(tmp_path: Path):
    path = tmp_path / "plain.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr("a.txt", "x" * 500)
    before = path.read_bytes()
    with pytest.raises(TacoFormatError, match=r"plain.zip: not a TACO ZIP"):
        update_header(str(path), [HeaderEntry(1, 2)])
    assert path.read_bytes() == before


def test_update_with_truncated_central_directory_leaves_file_identical(taco_zip: Path):
    raw = bytearray(taco_zip.read_bytes())
    # make the EOCD claim one more entry than the central directory holds
    eocd = raw.rfind(b"PK\x05\x06")
    raw[eocd + 8 : eocd + 10] = (int.from_bytes(raw[eocd + 8 : eocd + 10], "little") + 1).to_bytes(
        2, "little"
    )
    raw[eocd + 10 : eocd + 12] = raw[eocd + 8 : eocd + 10]
    taco_zip.write_bytes(bytes(raw))
    with pytest.raises(TacoFormatError, match="truncated central directory"):
        update_header(str(taco_zip), [HeaderEntry(1, 2)])
    assert taco_zip.read_bytes() == bytes(raw)


def test_update_on_truncated_file(taco_zip: Path):
    raw = taco_zip.read_bytes()
    taco_zip.write_bytes(raw[:-10])
    with pytest.raises(TacoFormatError, match="no end of central directory"):
        update_header(str(taco_zip), [HeaderEntry(1, 2)])
    assert taco_zip.read_bytes() == raw[:-10]


def test_read_header_of_short_file(tmp_path: Path):
    path = tmp_path / "short.tacozip"
    path.write_bytes(b"PK\x03\x04" + b"\0" * 20)
    with pytest.raises(
        TacoFormatError, match=r"short.tacozip: a TACO_HEADER needs 157 bytes, only 24"
    ):
        read_header(str(path))


def test_update_takes_plain_pairs_as_tacozip_does(taco_zip: Path):
    before = read_header(str(taco_zip)).entries
    pairs = [(e.offset, e.length) for e in reversed(before)]
    update_header(str(taco_zip), pairs)
    assert read_header(str(taco_zip)).entries == tuple(reversed(before))
    update_header(str(taco_zip), [before[0], (before[1].offset, before[1].length)])
    assert read_header(str(taco_zip)).entries == before
    _check_with_zip_tools(taco_zip)


@pytest.mark.parametrize(
    ("entries", "match"),
    [
        ([(1, 2), (3,)], r"entry 1: expected a HeaderEntry or an \(offset, length\) pair"),
        ([(1, 2), ("a", 3)], r"entry 1: expected .* found \('a', 3\)"),
        ([(1.5, 2)], r"entry 0: expected"),
        ([(-1, 2)], r"entry 0 \(-1, 2\): .*unsigned 64-bit"),
        ([None], r"entry 0: expected .* found None"),
        (5, r"expected a sequence of HeaderEntry or \(offset, length\) pairs, found 5"),
        ("ab", r"expected a sequence"),
        ([(0, 1)] * 8, r"at most 7 entries"),
    ],
)
def test_bad_entries_are_refused_and_leave_the_file_identical(
    taco_zip: Path, entries: object, match: str
):
    before = taco_zip.read_bytes()
    with pytest.raises(TacoFormatError, match=match):
        update_header(str(taco_zip), entries)  # type: ignore[arg-type]
    assert taco_zip.read_bytes() == before
