"""The writers' one-pass copy: bytes, ZIP CRC-32 and digest of every block, inline or with
the worker thread, and errors of either side raised to the caller with no thread left."""

from __future__ import annotations

import hashlib
import os
import threading
import zipfile
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pytest

from taco_gdal.errors import TacoIOError
from taco_gdal.format.names import CHECKSUM
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.model.package import MetadataPackage
from taco_gdal.write import create
from taco_gdal.write._copy import (
    THREADED_BLOCK,
    THREADED_MIN,
    Checksums,
    copy_blocks,
    pread_full,
)
from taco_gdal.write._sources import read_zip_metadata
from tests.support.digests import independent_digest

BLOCK = 256 * 1024


def _copy(tmp_path: Path, data: bytes, algorithm: str | None, block: int = BLOCK) -> Checksums:
    (tmp_path / "src").write_bytes(data)
    sums = Checksums(algorithm, zip_crc=True)
    with open(tmp_path / "src", "rb") as src, open(tmp_path / "dst", "wb") as dst:
        copy_blocks(pread_full(src.fileno(), "src"), len(data), dst.write, sums, block)
    assert (tmp_path / "dst").read_bytes() == data
    return sums


@pytest.mark.parametrize("algorithm", [None, "crc32c", "xxh3", "sha256"])
@pytest.mark.parametrize(
    "size", [0, 1, BLOCK, THREADED_MIN - 1, THREADED_MIN, THREADED_MIN + BLOCK * 3 + 7]
)
def test_bytes_crc_and_digest_inline_and_threaded(
    tmp_path: Path, algorithm: str | None, size: int
) -> None:
    data = os.urandom(size)
    sums = _copy(tmp_path, data, algorithm)
    assert sums.crc == zlib.crc32(data)
    assert sums.stored() == (None if algorithm is None else independent_digest(algorithm, data))


@pytest.mark.parametrize("size", [BLOCK * 3, THREADED_MIN + THREADED_BLOCK])
def test_a_source_ending_early_raises_and_leaves_no_thread(tmp_path: Path, size: int) -> None:
    (tmp_path / "src").write_bytes(os.urandom(size))
    threads = threading.active_count()
    with open(tmp_path / "src", "rb") as src, open(tmp_path / "dst", "wb") as dst:
        read = pread_full(src.fileno(), "src")
        with pytest.raises(TacoIOError, match=rf"src: expected .* more bytes at offset {size}"):
            copy_blocks(read, size + BLOCK, dst.write, Checksums("sha256", True), BLOCK)
    assert (tmp_path / "dst").stat().st_size == size  # every block read was written
    assert threading.active_count() == threads


def test_a_failing_write_beside_the_worker_is_raised_by_the_copy(tmp_path: Path) -> None:
    (tmp_path / "src").write_bytes(os.urandom(THREADED_MIN + BLOCK))
    written: list[int] = []

    def write(view: memoryview) -> None:
        if len(written) == 3:
            raise OSError(28, "No space left on device")
        written.append(len(view))

    threads = threading.active_count()
    with open(tmp_path / "src", "rb") as src, pytest.raises(OSError, match="No space left"):
        read = pread_full(src.fileno(), "src")
        copy_blocks(read, THREADED_MIN + BLOCK, write, Checksums("sha256", True), BLOCK)
    assert written == [THREADED_BLOCK] * 3
    assert threading.active_count() == threads


def _taco(folder: Path, seed: int) -> Taco:
    folder.mkdir()
    samples = []
    for i, size in enumerate([10, 300_000, THREADED_MIN + 12_345]):
        (folder / f"s{i}").write_bytes(hashlib.sha256(bytes([seed, i])).digest() * (size // 32))
        samples.append(Sample(f"s{i}", folder / f"s{i}"))
    return Taco(
        Tortilla(samples), id=f"copies{seed}", dataset_version="1", description="d",
        licenses=["CC0-1.0"], providers=[{"name": "t"}], tasks=["other"],
    )  # fmt: skip


def test_two_writes_at_once_keep_their_bytes_and_digests(tmp_path: Path) -> None:
    tacos = [_taco(tmp_path / f"in{seed}", seed) for seed in (1, 2)]
    outs = [tmp_path / f"out{seed}.tacozip" for seed in (1, 2)]
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda t, o: create(t, o, quiet=True, checksum="sha256"), tacos, outs))
    for seed, out in zip((1, 2), outs, strict=True):
        with zipfile.ZipFile(out) as archive:
            assert archive.testzip() is None  # every member's CRC-32
            for i in range(3):
                data = archive.read(f"DATA/s{i}")
                assert data == (tmp_path / f"in{seed}" / f"s{i}").read_bytes()
        stored = read_zip_metadata(out).levels[0].column(CHECKSUM).to_pylist()
        expected = [
            independent_digest("sha256", (tmp_path / f"in{seed}" / f"s{i}").read_bytes())
            for i in range(3)
        ]
        assert stored == expected


def test_create_writes_with_the_callers_memory_pool(tmp_path: Path) -> None:
    backend = pa.default_memory_pool().backend_name
    seen: list[str] = []
    taco = _taco(tmp_path / "in", 3)
    metadata = taco.metadata

    def spy() -> MetadataPackage:  # the pool in use while create() runs
        seen.append(pa.default_memory_pool().backend_name)
        return metadata()

    taco.metadata = spy  # type: ignore[method-assign]
    create(taco, tmp_path / "out.tacozip", quiet=True, checksum="crc32c")
    assert seen == [backend]
    assert pa.default_memory_pool().backend_name == backend
