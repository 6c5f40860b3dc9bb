"""verify(level="full") and TacoDataFrame.open(verify=True) against digests written by create()."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

import taco_gdal
from taco_gdal.errors import TacoChecksumError
from taco_gdal.format.names import CHECKSUM
from taco_gdal.verify import codes
from tests.support.datasets import make_taco


def _flip_member(path: Path, member: str) -> None:
    with zipfile.ZipFile(path) as z:
        info = z.getinfo(member)
    data = bytearray(path.read_bytes())
    data[info.header_offset + 30 + len(info.filename) + 60] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("algorithm", ["crc32c", "xxh3", "sha256"])
def test_full_verify_checks_digests_of_every_algorithm(tmp_path: Path, algorithm: str) -> None:
    out = taco_gdal.create(make_taco(tmp_path, "2level"), tmp_path / "d.tacozip", quiet=True,
                           checksum=algorithm)[0]  # fmt: skip
    assert taco_gdal.verify(out, level="full").ok
    _flip_member(out, "DATA/tile001/b03")
    report = taco_gdal.verify(out, level="full")
    found = {(f.code, f.member) for f in report.failures}
    assert found == {
        (codes.CRC_MISMATCH, "DATA/tile001/b03"),
        (codes.HASH_MISMATCH, "DATA/tile001/b03"),
    }
    digest = next(f for f in report.failures if f.code == codes.HASH_MISMATCH)
    assert str(digest.expected).startswith(f"{algorithm}:") and digest.found != digest.expected


def test_folder_digest_mismatch_is_the_only_check_of_bytes(tmp_path: Path) -> None:
    out = taco_gdal.create(make_taco(tmp_path, "flat"), tmp_path / "ds", quiet=True,
                           checksum="xxh3")[0]  # fmt: skip
    assert taco_gdal.verify(out, level="full").ok
    sample = out / "DATA" / "s002"
    data = bytearray(sample.read_bytes())
    data[70] ^= 0x01
    sample.write_bytes(bytes(data))
    assert taco_gdal.verify(out, level="crc").ok  # a FOLDER stores no CRC
    report = taco_gdal.verify(out, level="full")
    assert [(f.code, f.row_id) for f in report.failures] == [
        (codes.HASH_MISMATCH, "level0:2 (s002)")
    ]


def test_frame_open_verifies_the_digest(tmp_path: Path) -> None:
    out = taco_gdal.create(make_taco(tmp_path, "flat"), tmp_path / "d.tacozip", quiet=True,
                           checksum="crc32c")[0]  # fmt: skip
    frame = taco_gdal.load(out).data
    assert CHECKSUM in frame.columns
    with frame.open(1) as src:
        assert src.read().shape == (1, 16, 16)
    _flip_member(out, "DATA/s001")
    frame = taco_gdal.load(out).data
    with pytest.raises(TacoChecksumError) as caught, frame.open(1):
        pass
    message = str(caught.value)
    assert frame["internal:gdal_vsi"].iloc[1] in message  # the sample
    assert str(out) in message and message.count("crc32c:") == 2  # the container, both digests
    with frame.open(1, verify=False) as src:  # opting out reads the (changed) bytes
        assert src.count == 1
