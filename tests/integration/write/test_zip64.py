"""ZIP64 only where needed: a member over 4 GiB (sparse), and more than 65,535 members."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from taco_gdal.format import zip as zipfmt
from taco_gdal.write import write_zip
from tests.integration.write._package import package_from_tree
from tests.integration.write._verify import verify_zip

BIG = 4 * 1024**3 + 10


def _tail_records(path: Path) -> tuple[int, bool]:
    """EOCD entry count and whether a ZIP64 end record precedes it."""
    with open(path, "rb") as f:
        f.seek(-(zipfmt.EOCD_SIZE + zipfmt.ZIP64_LOCATOR_SIZE), 2)
        tail = f.read()
    locator = struct.unpack_from("<I", tail, 0)[0] == zipfmt.ZIP64_LOCATOR_SIGNATURE
    count = struct.unpack_from("<H", tail, zipfmt.ZIP64_LOCATOR_SIZE + 10)[0]
    return count, locator


def test_small_archive_has_no_zip64(tmp_path: Path) -> None:
    src = tmp_path / "a.bin"
    src.write_bytes(b"abc")
    out = write_zip(package_from_tree([("a", str(src))]), tmp_path / "s.tacozip", quiet=True)
    assert _tail_records(out) == (4, False)


@pytest.mark.slow
def test_member_over_4gib(tmp_path: Path) -> None:
    small_a, big, small_z = tmp_path / "a", tmp_path / "big", tmp_path / "z"
    small_a.write_bytes(b"first")
    with open(big, "wb") as f:  # sparse: 4 GiB of zeros, then 10 bytes
        f.truncate(BIG - 10)
        f.seek(BIG - 10)
        f.write(b"0123456789")
    small_z.write_bytes(b"last")
    package = package_from_tree([("a", str(small_a)), ("big", str(big)), ("z", str(small_z))])
    out = tmp_path / "big.tacozip"
    try:
        write_zip(package, out, quiet=True)
        level0 = verify_zip(out, package, unzip_exclude=("DATA/big",))[0]
        assert level0.column("internal:size").to_pylist() == [5, BIG, 4]
        offsets = level0.column("internal:offset").to_pylist()
        assert offsets[2] > zipfmt.ZIP64_LIMIT
        with open(out, "rb") as f:
            f.seek(offsets[1] - 20 - len(b"DATA/big") - 30)
            lfh = zipfmt.LocalFileHeader.unpack(f.read(30 + 8 + 20))
        assert lfh.version_needed == 45 and lfh.size == BIG and len(lfh.extra) == 20
        count, zip64 = _tail_records(out)
        assert zip64 and count == 6  # the offsets of the last members need the ZIP64 EOCD
    finally:
        out.unlink(missing_ok=True)
        big.unlink()


@pytest.mark.slow
def test_more_than_65535_members(tmp_path: Path) -> None:
    src = tmp_path / "tiny.bin"
    src.write_bytes(b"tiny sample")
    n = 70_001
    package = package_from_tree([(f"s{i:06d}", str(src)) for i in range(n)])
    out = tmp_path / "many.tacozip"
    try:
        write_zip(package, out, quiet=True)
        level0 = verify_zip(out, package)[0]
        assert level0.num_rows == n
        count, zip64 = _tail_records(out)
        assert zip64 and count == 0xFFFF
    finally:
        out.unlink(missing_ok=True)
