"""The ZIP writer reads small local files on its own thread, with the kernel reading a
window of files ahead (``posix_fadvise(WILLNEED)``) instead of read-ahead threads.

Files are evicted from the page cache with ``posix_fadvise(DONTNEED)`` after an
``fsync`` (clean pages of our own files; nothing else on the machine is touched),
and whether a file is cached is asked with ``mincore`` on a mapping of it.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import resource
import threading
import time
import zipfile
from pathlib import Path

import pytest

from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.write import _copy, create
from taco_gdal.write._copy import WINDOW, read_small_files


def _files(folder: Path, count: int, size: int = 16) -> list[str]:
    folder.mkdir(exist_ok=True)
    paths = []
    for i in range(count):
        path = folder / f"f{i}"
        with open(path, "wb") as f:
            f.write(i.to_bytes(4, "little") * (size // 4))
            f.flush()
            os.fsync(f.fileno())
        paths.append(str(path))
    return paths


def _evict(paths: list[str], tries: int = 50) -> None:
    """Drop ``paths`` from the page cache, asking again while any page stays.

    ``DONTNEED`` skips pages the kernel has not yet put on its LRU lists (they
    wait in per-CPU batches just after a read): one call kept a page of the
    first eight files in about one run in seven.
    """
    for _ in range(tries):
        for path in paths:
            fd = os.open(path, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)
        if not any(_cached(path) for path in paths):
            return
        time.sleep(0.02)


_LIBC = ctypes.CDLL(None, use_errno=True)


def _cached(path: str) -> bool:
    """True if the whole file is in the page cache, asked with ``mincore`` on a mapping
    of it: no read is made (``preadv2(RWF_NOWAIT)`` on a missing page starts reading it
    ahead, so the next question found it cached)."""
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY) as mapped:
        size = len(mapped)
        view = (ctypes.c_char * size).from_buffer(mapped)
        pages = (ctypes.c_ubyte * (-(-size // mmap.PAGESIZE)))()
        try:
            if _LIBC.mincore(ctypes.c_void_p(ctypes.addressof(view)), size, pages) != 0:
                raise OSError(ctypes.get_errno(), f"mincore of {path} failed")
        finally:
            del view
        return all(page & 1 for page in pages)


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_files_in_order_errors_and_skipped_sources_in_place(tmp_path: Path) -> None:
    small, large = _files(tmp_path / "s", 3), _files(tmp_path / "l", 1, size=4096)
    missing = str(tmp_path / "missing")
    sources = [small[0], missing, None, "/vsis3/bucket/key", large[0], small[1], small[2]]
    got = list(read_small_files(sources, 1024))
    assert got[0] == Path(small[0]).read_bytes()
    assert isinstance(got[1], FileNotFoundError)
    assert got[2:5] == [None, None, None]  # not local, not local, larger than the limit
    assert got[5:] == [Path(p).read_bytes() for p in small[1:]]


def test_the_window_is_asked_of_the_kernel_before_it_is_read(tmp_path: Path) -> None:
    paths = _files(tmp_path / "cold", WINDOW + 40)
    expected = [Path(p).read_bytes() for p in paths]
    _evict(paths)
    assert not any(_cached(p) for p in paths[:8]), "posix_fadvise(DONTNEED) kept the pages"
    threads = threading.active_count()
    files = read_small_files(paths, 1024)
    first = next(files)
    # the first read was preceded by WILLNEED for the whole window: the last file of
    # the window is being read (or was read) by the kernel, not by a thread of ours
    assert first == expected[0]
    assert threading.active_count() == threads
    for _ in range(200):
        if _cached(paths[WINDOW - 1]):
            break
        threading.Event().wait(0.01)
    assert _cached(paths[WINDOW - 1])
    assert not _cached(paths[WINDOW + 39])  # beyond the window: not asked for yet
    assert [first, *files] == expected


def test_descriptors_closed_when_the_reader_is_dropped_early(tmp_path: Path) -> None:
    paths = _files(tmp_path / "f", 50)
    before = _open_fds()
    files = read_small_files(paths, 1024)
    next(files)
    assert _open_fds() == before + 49  # the rest of the window is open
    files.close()
    assert _open_fds() == before


def test_out_of_descriptors_opens_each_file_when_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = _files(tmp_path / "f", 40)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    limit = _open_fds() + 12
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
    try:
        monkeypatch.setattr(_copy, "_window", lambda: 30)  # more than the limit allows
        got = list(read_small_files(paths, 1024))
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert got == [Path(p).read_bytes() for p in paths]


def test_a_write_from_cold_files_equals_one_from_cached_files(tmp_path: Path) -> None:
    paths = _files(tmp_path / "src", WINDOW + 70)

    def taco() -> Taco:
        samples = [Sample(f"s{i:03d}", Path(p), cloud=float(i)) for i, p in enumerate(paths)]
        return Taco(
            Tortilla(samples), id="ra", dataset_version="1", description="d",
            licenses=["CC0-1.0"], providers=[{"name": "tests"}], tasks=["other"],
        )  # fmt: skip

    create(taco(), tmp_path / "warm.tacozip", quiet=True)
    _evict(paths)
    create(taco(), tmp_path / "cold.tacozip", quiet=True)
    with (
        zipfile.ZipFile(tmp_path / "warm.tacozip") as warm,
        zipfile.ZipFile(tmp_path / "cold.tacozip") as cold,
    ):
        names = warm.namelist()
        assert names == cold.namelist()
        assert len(names) == len(paths) + 3  # TACO_HEADER, level0.parquet, COLLECTION.json
        for name in names:
            assert warm.read(name) == cold.read(name), name
        for i, path in enumerate(paths):
            assert warm.read(f"DATA/s{i:03d}") == Path(path).read_bytes()
