"""write/_output_digests.py: SHA-256 of small members found by the native scan thread.

The thread (``taco_gdal/_sha256_scan.h``) reads a real ZIP written by the ZIP
writer through a real buffered file as it grows; every digest is checked
against hashlib on the bytes written; the thread is found and measured in
``/proc/self/task`` by its name, and none outlives its writer.
"""

from __future__ import annotations

import logging
import mmap
import os
import random
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import numpy as np
import pytest

from taco_gdal import _sha256_thread
from taco_gdal.errors import TacoIOError
from taco_gdal.write import _output_digests
from taco_gdal.write._cpus import other_cpus
from taco_gdal.write._output_digests import DigestScan, answer_files
from taco_gdal.write.zipstream import ZipWriter
from tests.zip_members import ask, copy_large_member, sha256s, write_members, zip64_member

THREAD: Final = "taco-zip-sha256"
"""The scan thread's name, as ``/proc`` shows it."""


def _scan_threads() -> list[int]:
    """This process's scan threads (their ids)."""
    found = []
    for task in Path("/proc/self/task").iterdir():
        try:
            if (task / "comm").read_text().strip() == THREAD:
                found.append(int(task.name))
        except FileNotFoundError:  # a thread that just ended
            continue
    return found


def _gone() -> bool:
    deadline = time.monotonic() + 10
    while _scan_threads():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _read_by(tid: int) -> int:
    """Bytes thread ``tid`` of this process has read so far (``rchar``)."""
    text = Path(f"/proc/self/task/{tid}/io").read_text()
    fields = dict(line.split(": ") for line in text.splitlines())
    return int(fields["rchar"])


def test_the_thread_finds_every_small_member_as_the_zip_grows(
    tmp_path: Path, here: list[int]
) -> None:
    with open(tmp_path / "out.zip", "w+b") as out:
        helper = DigestScan(out.fileno(), out.flush, other_cpus(), limit=10_000)
        assert len(_scan_threads()) == 1
        members = write_members(ZipWriter(out), 2500, seed=1)
        small = [(position, data) for position, data in members if len(data) <= 10_000]
        large = [(position, data) for position, data in members if len(data) > 10_000]
        random.Random(2).shuffle(small)
        found = ask(helper, small)
        assert _gone()  # the first question ends the thread's work
        assert ask(helper, large) == sha256s(large)  # it skipped these
        helper.abort()
    assert found == sha256s(small)
    assert len(large) > 400 and here == [len(large)]  # every small member was the thread's


def test_the_thread_waits_for_a_large_member_without_reading_it(tmp_path: Path) -> None:
    with open(tmp_path / "out.zip", "w+b") as out:
        helper = DigestScan(out.fileno(), out.flush, limit=10_000)
        (tid,) = _scan_threads()
        writer = ZipWriter(out)
        members = write_members(writer, 10, seed=16, sizes=(100,))
        out.flush()
        time.sleep(0.05)  # it has read these
        before = _read_by(tid)
        large = copy_large_member(writer, out, seed=17)
        members += write_members(writer, 1200, seed=18, sizes=(100,))
        out.flush()
        time.sleep(0.05)
        read = _read_by(tid) - before
        found = ask(helper, members)
        helper.abort()
    assert found == sha256s(members)
    # its header's window once (at most 1 MiB), then the 1,200 members after it (0.2 MB)
    assert large == 8 << 20 and read < 1.5 * (1 << 20), (
        f"the thread read {read} bytes while the member was copied"
    )


def test_the_thread_reads_sizes_from_a_zip64_header(tmp_path: Path, here: list[int]) -> None:
    with open(tmp_path / "out.zip", "w+b") as out:
        helper = DigestScan(out.fileno(), out.flush)
        members = write_members(ZipWriter(out), 20, seed=9)
        members.append((zip64_member(out, b"big", b"zip64 sized"), b"zip64 sized"))
        members += write_members(ZipWriter(out), 20, seed=10)  # found past it
        found = ask(helper, members)
        helper.abort()
    assert found == sha256s(members) and here == []


def test_the_thread_stops_at_what_is_not_a_member_and_the_writer_digests_the_rest(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, here: list[int]
) -> None:
    with open(tmp_path / "out.zip", "w+b") as out:
        helper = DigestScan(out.fileno(), out.flush)
        writer = ZipWriter(out)
        members = write_members(writer, 1200, seed=11)
        out.write(b"not a member header")  # what the thread must not take for one
        writer._end = out.tell()
        members += write_members(writer, 30, seed=12)
        with caplog.at_level(logging.WARNING, logger=_output_digests.__name__):
            found = ask(helper, members)
        helper.abort()
    assert found == sha256s(members)
    assert here == [30]  # the 1,200 before the bad bytes were the thread's
    assert "not a member header" in caplog.text and "the writer computes the rest" in caplog.text


def test_a_hostile_declared_size_stops_the_thread_not_the_write(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, here: list[int]
) -> None:
    # a ZIP64 stored size of 2**63: no member has it, and position + size would overflow
    with open(tmp_path / "out.zip", "w+b") as out:
        helper = DigestScan(out.fileno(), out.flush)
        members = write_members(ZipWriter(out), 50, seed=19)
        extra = struct.pack("<HHQQ", 0x0001, 16, 1 << 63, 1 << 63)
        out.write(
            struct.pack(
                "<IHHHHHIIIHH", 0x04034B50, 45, 0, 0, 0, 0, 0, 0xFFFFFFFF, 0xFFFFFFFF, 1, 20
            )
            + b"x"
            + extra
        )
        with caplog.at_level(logging.WARNING, logger=_output_digests.__name__):
            found = ask(helper, members)
        helper.abort()
    assert found == sha256s(members) and here == []
    assert "the writer computes the rest" in caplog.text
    assert _gone()


def test_the_thread_reads_only_what_left_the_writers_buffer(
    tmp_path: Path, here: list[int]
) -> None:
    with open(tmp_path / "out.zip", "w+b", buffering=1 << 20) as out:
        helper = DigestScan(out.fileno(), out.flush)
        (tid,) = _scan_threads()
        members = write_members(ZipWriter(out), 2000, seed=15, sizes=(100,))  # 0.3 MB: all buffered
        time.sleep(0.1)  # the thread runs, and finds nothing in the file
        assert os.fstat(out.fileno()).st_size == 0 and _read_by(tid) == 0
        found = ask(helper, members)  # flushes, then waits for the thread
        helper.abort()
    assert found == sha256s(members) and here == []


def test_an_aborted_scan_ends_its_thread_and_the_writer_digests_everything(
    tmp_path: Path, here: list[int]
) -> None:
    with open(tmp_path / "out.zip", "w+b") as out:
        helper = DigestScan(out.fileno(), out.flush)
        members = write_members(ZipWriter(out), 100, seed=20)
        helper.abort()
        assert _gone()
        found = ask(helper, members)
        helper.abort()  # twice: nothing happens
    assert found == sha256s(members) and here == [100]


@pytest.fixture
def answers() -> Iterator[tuple[int, int]]:
    """The two answer files a Scanner appends to (closed after the test)."""
    files = answer_files()
    yield files
    for fd in files:
        os.close(fd)


def test_a_dropped_scanner_stops_its_thread_and_closes_its_descriptors(
    tmp_path: Path, answers: tuple[int, int]
) -> None:
    with open(tmp_path / "out.zip", "w+b") as out:
        files = _identities((out.fileno(), *answers))
        scanner = _sha256_thread.Scanner(out.fileno(), 1 << 18, *answers)
        assert len(_scan_threads()) == 1
        assert _opened(files) == [2, 2, 2]  # its own duplicates
        del scanner
        assert _gone() and _opened(files) == [1, 1, 1]


def _opened(files: list[tuple[int, int]]) -> list[int]:
    """How many of this process's descriptors are open on each of ``files`` (device and
    inode: other tests' threads may open and close descriptors meanwhile)."""
    found = []
    for entry in Path("/proc/self/fd").iterdir():
        try:
            status = entry.stat()
        except (FileNotFoundError, NotADirectoryError):  # closed while listed
            continue
        found.append((status.st_dev, status.st_ino))
    return [found.count(identity) for identity in files]


def _identities(fds: tuple[int, ...]) -> list[tuple[int, int]]:
    return [(os.fstat(fd).st_dev, os.fstat(fd).st_ino) for fd in fds]


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ((0, -1), ValueError, r"limit must be in 0\.\.2\*\*30, not -1"),
        ((0, 1 << 31), ValueError, "limit must be in"),
        ((-5, 10), OSError, "Bad file descriptor"),
        ((0, 10, [99999]), ValueError, "CPU 99999 is not in"),
    ],
)
def test_a_scanner_refuses_bad_arguments(
    arguments: tuple[Any, ...], error: type[Exception], message: str, answers: tuple[int, int]
) -> None:
    fd, limit, *cpus = arguments
    files = _identities(answers)
    with pytest.raises(error, match=message):
        _sha256_thread.Scanner(fd, limit, *answers, *cpus)
    assert _gone() and _opened(files) == [1, 1]


def test_a_scanner_refuses_answer_files_it_cannot_use(tmp_path: Path) -> None:
    with (
        open(tmp_path / "out.zip", "w+b") as out,
        pytest.raises(OSError, match="Bad file descriptor"),
    ):
        _sha256_thread.Scanner(out.fileno(), 10, -1, -1)
    assert _gone()


def test_a_finished_scanner_refuses_to_finish_again(
    tmp_path: Path, answers: tuple[int, int]
) -> None:
    with open(tmp_path / "out.zip", "w+b") as out:
        scanner = _sha256_thread.Scanner(out.fileno(), 1 << 18, *answers)
        with pytest.raises(ValueError, match="must be >= 0, not -1"):
            scanner.finish(-1)
        assert scanner.finish(0) == 0
        with pytest.raises(ValueError, match="finished or closed"):
            scanner.finish(0)


def test_a_scanner_made_before_fork_is_refused_in_the_child(
    tmp_path: Path, answers: tuple[int, int]
) -> None:
    with open(tmp_path / "out.zip", "w+b") as out:
        scanner = _sha256_thread.Scanner(out.fileno(), 1 << 18, *answers)
        pid = os.fork()
        if pid == 0:  # the child: the thread does not exist here
            try:
                scanner.finish(0)
                code = 1
            except RuntimeError as exc:
                code = 0 if "after fork()" in str(exc) else 2
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert scanner.finish(0) == 0  # the parent's thread is untouched


def test_the_column_is_built_on_the_threads_answers_without_a_copy(
    tmp_path: Path, here: list[int]
) -> None:
    with open(tmp_path / "out.zip", "w+b") as out:
        helper = DigestScan(out.fileno(), out.flush)
        writer = ZipWriter(out)
        writer.add_bytes("header", b"a member before the samples (the TACO_HEADER)")
        members = write_members(writer, 500, seed=21, sizes=(100, 4096))
        rows = helper.stored_at(
            np.array([p for p, _ in members], np.int64), np.array([len(d) for _, d in members])
        )
        helper.abort()
    assert rows.tobytes() == sha256s(members) and here == []
    assert _memory_of(rows) is mmap.mmap  # the thread's file, mapped: nothing formatted here


def _memory_of(array: np.ndarray) -> type:
    """The type of what holds ``array``'s bytes (through views and buffers)."""
    base: object = array
    while isinstance(base, np.ndarray | memoryview):
        base = base.base if isinstance(base, np.ndarray) else base.obj
    return type(base)


def test_without_the_extension_there_is_no_scan_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_output_digests, "NATIVE_SHA256", "taco_gdal._not_built")
    with pytest.raises(TacoIOError, match="no native SHA-256 scan thread here"):
        DigestScan(0, lambda: None)
