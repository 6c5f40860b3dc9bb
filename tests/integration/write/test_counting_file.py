"""The TACO ZIP writer's output file: buffered small writes, direct large ones, one byte stream."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from taco_gdal.write.zip_container import DIRECT_MIN, _CountingFile


def test_mixed_writes_and_seeks_give_the_bytes_in_order(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    big = [rng.integers(0, 256, DIRECT_MIN + k, dtype=np.uint8).tobytes() for k in (0, 1, 4093)]
    small = [rng.integers(0, 256, k, dtype=np.uint8).tobytes() for k in (1, 30, 5000)]
    expected = bytearray()
    with open(tmp_path / "out.bin", "w+b", buffering=1024 * 1024) as raw:
        f = _CountingFile(raw)
        for part in (small[0], big[0], big[1], small[1], memoryview(big[2])):
            assert f.write(part) == len(part)
            expected += part
            assert f.tell() == len(expected)
        # a hole (a block of zeros skipped with SEEK_CUR) right after a direct write
        assert f.seek(DIRECT_MIN, os.SEEK_CUR) == len(expected) + DIRECT_MIN
        expected += bytes(DIRECT_MIN)
        for part in (big[0], small[2]):
            f.write(part)
            expected += part
        # patch four bytes inside the first large block, as a member's CRC is patched
        f.seek(10)
        f.write(b"CRC!")
        expected[10:14] = b"CRC!"
        f.seek(len(expected))
        f.write(small[1])
        expected += small[1]
        assert f.tell() == len(expected)
        f.flush()
    assert (tmp_path / "out.bin").read_bytes() == bytes(expected)
