"""write/_copy.copy_fd: the one-pass local copy of the ZIP writer and of FOLDER digests.

Checked against independent code (zlib's CRC-32, the digest libraries) for
copies that start at an offset, land at a position, and end on a partial block.
"""

from __future__ import annotations

import hashlib
import os
import tracemalloc
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from taco_gdal.errors import TacoIOError
from taco_gdal.format.checksum import StreamingDigest, digest_value
from taco_gdal.write._copy import _RING, _THREADED_DIGESTS, _THREADED_MIN, COPY_BLOCK, copy_fd
from tests.forking import in_forked_child

SIZES = [
    1,
    COPY_BLOCK - 1,
    COPY_BLOCK + 1,
    COPY_BLOCK * 3 + 17,
    4 * 1024 * 1024,
    9 * 1024 * 1024 + 12345,
]
THREADED = _THREADED_MIN  # SHA-256 of a copy this large runs in the digest thread


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("algorithm", [None, "sha256", "xxh3", "crc32c"])
def test_copy_fd_bytes_crc_and_digest(tmp_path: Path, size: int, algorithm: str | None) -> None:
    data = os.urandom(size + 100)
    (tmp_path / "src").write_bytes(data)
    digest = None if algorithm is None else StreamingDigest(algorithm)
    written: list[tuple[int, int]] = []
    src = os.open(tmp_path / "src", os.O_RDONLY)
    dst = os.open(tmp_path / "dst", os.O_CREAT | os.O_RDWR, 0o644)
    try:
        os.write(dst, b"H" * 7)
        crc = copy_fd(src, 33, size, dst, 7, digest, lambda at, n: written.append((at, n)))
    finally:
        os.close(src)
        os.close(dst)
    copied = data[33 : 33 + size]
    assert (tmp_path / "dst").read_bytes() == b"H" * 7 + copied
    assert crc == zlib.crc32(copied)
    assert sum(n for _, n in written) == size
    assert [at for at, _ in written] == sorted(at for at, _ in written)
    assert written[0][0] == 7
    if digest is not None:
        fresh = StreamingDigest(digest.algorithm)
        fresh.update(copied)
        assert digest.value() == fresh.value()
    if algorithm == "sha256":
        assert digest is not None
        assert digest.value() == f"sha256:{hashlib.sha256(copied).hexdigest()}"


def test_source_ending_early_raises(tmp_path: Path) -> None:
    (tmp_path / "src").write_bytes(os.urandom(5 * 1024 * 1024))
    src = os.open(tmp_path / "src", os.O_RDONLY)
    dst = os.open(tmp_path / "dst", os.O_CREAT | os.O_WRONLY, 0o644)
    try:
        with pytest.raises(TacoIOError, match=r"expected .* more bytes at offset 5242880"):
            copy_fd(src, 0, 6 * 1024 * 1024, dst, 0, StreamingDigest("sha256"), where="src")
    finally:
        os.close(src)
        os.close(dst)
    assert (tmp_path / "dst").stat().st_size == 5 * 1024 * 1024  # every byte read was written


@pytest.mark.parametrize("algorithm", sorted(_THREADED_DIGESTS))
def test_threaded_digest_source_ending_early_raises(tmp_path: Path, algorithm: str) -> None:
    # a threaded digest (SHA-256 of two blocks or more) that fails mid-copy:
    # same error, same bytes, and the thread is free for the next copy
    size = 5 * 1024 * 1024
    (tmp_path / "src").write_bytes(os.urandom(size))
    src = os.open(tmp_path / "src", os.O_RDONLY)
    dst = os.open(tmp_path / "dst", os.O_CREAT | os.O_WRONLY, 0o644)
    try:
        assert size >= THREADED
        with pytest.raises(TacoIOError, match=rf"expected .* more bytes at offset {size}"):
            copy_fd(src, 0, size + 4 * 2**20, dst, 0, StreamingDigest(algorithm), where="src")
        after = StreamingDigest(algorithm)
        copy_fd(src, 0, size, dst, 0, after)
    finally:
        os.close(src)
        os.close(dst)
    assert (tmp_path / "dst").stat().st_size == size
    assert after.value() == digest_value(algorithm, (tmp_path / "src").read_bytes())


@pytest.mark.parametrize("algorithm", sorted(_THREADED_DIGESTS))
def test_threaded_digest_covers_every_segment(tmp_path: Path, algorithm: str) -> None:
    # more blocks than the ring holds, and a last partial block
    data = os.urandom(COPY_BLOCK * (_RING * 3 + 1) + 777)
    (tmp_path / "src").write_bytes(data)
    digest = StreamingDigest(algorithm)
    src = os.open(tmp_path / "src", os.O_RDONLY)
    dst = os.open(tmp_path / "dst", os.O_CREAT | os.O_WRONLY, 0o644)
    try:
        crc = copy_fd(src, 0, len(data), dst, 0, digest)
    finally:
        os.close(src)
        os.close(dst)
    assert (tmp_path / "dst").read_bytes() == data
    assert crc == zlib.crc32(data)
    assert digest.value() == digest_value(algorithm, data)
    if algorithm == "sha256":
        assert digest.value() == f"sha256:{hashlib.sha256(data).hexdigest()}"


def test_digest_thread_in_a_forked_child(tmp_path: Path) -> None:
    # the helper thread does not survive fork: a child starts its own and gets the same digest
    data = os.urandom(COPY_BLOCK * 5 + 3)
    (tmp_path / "src").write_bytes(data)

    def sha256_copy(name: str) -> str:
        digest = StreamingDigest("sha256")
        src = os.open(tmp_path / "src", os.O_RDONLY)
        dst = os.open(tmp_path / name, os.O_CREAT | os.O_WRONLY, 0o644)
        try:
            copy_fd(src, 0, len(data), dst, 0, digest)
        finally:
            os.close(src)
            os.close(dst)
        return digest.value()

    parent = sha256_copy("parent")  # the parent's thread is running when it forks
    child = in_forked_child(lambda: sha256_copy("child"))
    assert parent == child == f"sha256:{hashlib.sha256(data).hexdigest()}"
    assert (tmp_path / "child").read_bytes() == data


def _copy_file(source: Path, target: Path, algorithm: str | None = None) -> int:
    digest = None if algorithm is None else StreamingDigest(algorithm)
    src = os.open(source, os.O_RDONLY)
    dst = os.open(target, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o644)
    try:
        return copy_fd(src, 0, source.stat().st_size, dst, 0, digest)
    finally:
        os.close(src)
        os.close(dst)


@pytest.mark.parametrize("algorithm", [None, "crc32c", "xxh3"])
def test_copies_on_one_thread_reuse_one_block(tmp_path: Path, algorithm: str | None) -> None:
    """A write of many 1 MiB samples must not allocate (and, during a write, map and
    fault in) a fresh 256 KiB block for each sample."""
    source = tmp_path / "src"
    source.write_bytes(os.urandom(4 * COPY_BLOCK + 5))
    _copy_file(source, tmp_path / "warm", algorithm)  # the thread's block exists from here
    tracemalloc.start()
    try:
        crcs = [_copy_file(source, tmp_path / f"dst{i}", algorithm) for i in range(5)]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < COPY_BLOCK // 4, f"expected no block allocated per copy, peak {peak} bytes"
    assert crcs == [zlib.crc32(source.read_bytes())] * 5
    assert all((tmp_path / f"dst{i}").read_bytes() == source.read_bytes() for i in range(5))


def test_copies_on_two_threads_at_once_keep_their_bytes(tmp_path: Path) -> None:
    """Each thread has its own spare block: concurrent copies never share one."""
    sources = [tmp_path / f"src{k}" for k in range(2)]
    for source in sources:
        source.write_bytes(os.urandom(6 * COPY_BLOCK + 99))

    def copies(k: int) -> list[int]:
        return [_copy_file(sources[k], tmp_path / f"dst{k}_{i}", "crc32c") for i in range(20)]

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(copies, range(2)))
    for k, crcs in enumerate(results):
        data = sources[k].read_bytes()
        assert crcs == [zlib.crc32(data)] * 20
        assert all((tmp_path / f"dst{k}_{i}").read_bytes() == data for i in range(20))
