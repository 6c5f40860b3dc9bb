"""write/_digest_process.py: SHA-256 of small members computed by a real helper process.

Every digest is checked against hashlib on the bytes written; the members are
real ZIP members written by the ZIP writer through a real buffered file, which
the helper reads as it grows; the helper is started for real (``python -I
-S``), killed for real, and refused for real (an executable that is not
Python), and no helper outlives its writer.
"""

from __future__ import annotations

import hashlib
import logging
import mmap
import os
import random
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import numpy as np
import pytest

from taco_gdal import _sha256_thread
from taco_gdal.errors import TacoError, TacoIOError
from taco_gdal.format.names import CHECKSUM
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.write import (
    _digest_process,
    _digest_thread,
    _output_digests,
    create,
    zip_container,
    zipstream,
)
from taco_gdal.write._cpus import other_cpus
from taco_gdal.write._digest_process import DigestProcess, start_digest_process
from taco_gdal.write._digest_thread import (
    DigestThread,
    LaneDigests,
    MemberDigests,
    start_member_digests,
)
from taco_gdal.write._output_digests import DigestScan
from taco_gdal.write._sources import read_zip_metadata
from taco_gdal.write.zipstream import ZipWriter
from tests.threads import find_thread_cpus, thread_cpus
from tests.waiting import wait_for
from tests.zip_members import ask, copy_large_member, sha256s, write_members, zip64_member

T = TypeVar("T")


def _children() -> set[int]:
    """Live children of this process (from /proc: reaped ones are gone)."""
    found: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        try:
            found.update(int(pid) for pid in (task / "children").read_text().split())
        except FileNotFoundError:  # a thread that just ended
            continue
    return found


def _reaped(before: set[int]) -> bool:
    """True once every child started since ``before`` has ended and been reaped
    (helpers are reaped by a thread after their writer stops them)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if _children() <= before:
            return True
        time.sleep(0.02)
    return False


def _helper(out: BinaryIO, limit: int = zipstream.LOCAL_BLOCK) -> DigestProcess:
    helper = start_digest_process("sha256", out.fileno(), out.flush, other_cpus(), limit)
    assert helper is not None, "a helper process must start where Python runs"
    return helper


def _found(helper: DigestProcess) -> int:
    """Members the helper has digested so far (places of 16 bytes in its file)."""
    return os.fstat(helper._files[0]).st_size // 16


def _kept(helper: DigestProcess) -> int:
    """Members whose digests the writer took from the helper (once it asked)."""
    assert helper._answers is not None, "the writer has not asked for digests yet"
    return len(helper._answers[0])


def _answered(helper: DigestProcess, count: int) -> None:
    """Wait until the helper has digested ``count`` members (it started and read them)."""
    wait_for(lambda: _found(helper) >= count, f"the helper found {count} members", 30)


def test_the_helper_finds_every_small_member_as_the_zip_grows(
    tmp_path: Path, here: list[int]
) -> None:
    before = _children()
    with open(tmp_path / "out.zip", "w+b") as out:
        helper = _helper(out, limit=10_000)
        assert helper._spawned() is not None and len(_children() - before) == 1
        members = write_members(ZipWriter(out), 2500, seed=1)
        small = [(position, data) for position, data in members if len(data) <= 10_000]
        large = [(position, data) for position, data in members if len(data) > 10_000]
        random.Random(2).shuffle(small)
        found = ask(helper, small)
        assert ask(helper, large) == sha256s(large)  # the helper skipped these
        helper.abort()
    assert found == sha256s(small)
    assert _kept(helper) == len(small) and len(large) > 400
    assert here == [len(large)]  # every small member was the helper's
    assert _reaped(before)


def _read_by(pid: int) -> int:
    """Bytes process ``pid`` has read so far (``rchar``: every read, page cache or not)."""
    fields = dict(line.split(": ") for line in Path(f"/proc/{pid}/io").read_text().splitlines())
    return int(fields["rchar"])


def test_the_helper_waits_for_a_large_member_without_reading_it_again(tmp_path: Path) -> None:
    with open(tmp_path / "out.zip", "w+b") as out:
        helper = _helper(out, limit=10_000)
        child = helper._spawned()
        assert child is not None
        writer = ZipWriter(out)
        members = write_members(writer, 10, seed=16, sizes=(100,))
        out.flush()
        _answered(helper, 10)
        before = _read_by(child.pid)
        large = copy_large_member(writer, out, seed=17)
        members += write_members(writer, 1200, seed=18, sizes=(100,))
        found = ask(helper, members)
        read = _read_by(child.pid) - before
        helper.abort()
    assert found == sha256s(members)
    # its header window once (at most 1 MiB), then the 1,200 members after it (0.2 MB)
    assert large == 8 << 20 and read < 1.5 * (1 << 20), (
        f"the helper read {read} bytes while the member was copied"
    )


def test_create_tells_the_helper_nothing_per_sample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, here: list[int]
) -> None:
    def refused(self: DigestProcess, data: bytes, position: int) -> None:
        raise AssertionError("the writer called submit")

    monkeypatch.setattr(DigestProcess, "submit", refused)
    taco, contents = _taco(tmp_path / "src", 1500)
    out = create(taco, tmp_path / "out.tacozip", checksum="sha256", quiet=True)[0]
    table = read_zip_metadata(out).levels[0]
    assert table.column(CHECKSUM).to_pylist() == [
        f"sha256:{hashlib.sha256(contents[i]).hexdigest()}" for i in table.column("id").to_pylist()
    ]
    assert here == []  # the helper found all 1,500 samples in the ZIP


def _digest_observed(
    path: Path, count: int, seed: int, look: Callable[[int, int], T]
) -> tuple[T, bool]:
    """``look(helper_pid, output_fd)`` on a helper started for ``count`` members written to
    ``path``; and whether the digests it returned are hashlib's."""
    with open(path, "w+b") as out:
        helper = _helper(out)
        child = helper._spawned()
        assert child is not None
        seen = look(child.pid, out.fileno())
        members = write_members(ZipWriter(out), count, seed)
        found = ask(helper, members)
        helper.abort()
    return seen, found == sha256s(members)


def _cmdline(pid: int) -> list[bytes]:
    """``pid``'s command line once the kernel shows it: ``Popen`` returns as soon as the
    child's exec closed its descriptors, and for a moment after that ``/proc/<pid>/cmdline``
    is still empty (the new program's arguments are not in place yet)."""
    raw = wait_for(
        Path(f"/proc/{pid}/cmdline").read_bytes, f"process {pid} shows a command line", step=0.001
    )
    return raw.rstrip(b"\0").split(b"\0")


def test_the_helper_scans_with_the_packages_extension(tmp_path: Path) -> None:
    def argv(pid: int, fd: int) -> tuple[list[bytes], bool, list[str]]:
        args = _cmdline(pid)
        output = os.path.samestat(os.fstat(fd), os.stat(f"/proc/{pid}/fd/{int(args[-6])}"))
        answers = [os.readlink(f"/proc/{pid}/fd/{int(arg)}") for arg in args[-3:-1]]
        return args, output, answers

    (args, output, answers), right = _digest_observed(tmp_path / "out.zip", 400, 7, argv)
    native = _digest_process.native_path()
    assert native is not None and Path(native).samefile(_sha256_thread.__file__)
    assert args[-4] == native.encode()
    assert args[-5] == str(zipstream.LOCAL_BLOCK).encode()  # the writer's small members
    assert output  # the descriptor it reads is the writer's output
    assert answers[0].startswith("/memfd:taco-digest-places")  # its answers, in memory
    assert answers[1].startswith("/memfd:taco-digest-stored")
    assert right


def _run_child(
    path: Path, extension: str, limit: int = 1 << 20
) -> tuple[int, bytes, tuple[bytes, bytes]]:
    """The helper's script run on the finished ZIP ``path`` told its members end at
    the file's end: exit code, the status it wrote, and its answers (places, stored)."""
    end = path.stat().st_size
    with (
        open(path, "rb") as output,
        tempfile.TemporaryFile() as places,
        tempfile.TemporaryFile() as stored,
    ):
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", _digest_process._CHILD, str(output.fileno()),
             str(limit), extension, str(places.fileno()), str(stored.fileno())],
            input=struct.pack("<Q", end), capture_output=True, timeout=60,
            pass_fds=(output.fileno(), places.fileno(), stored.fileno()),
        )  # fmt: skip
        places.seek(0)
        stored.seek(0)
        return done.returncode, done.stdout, (places.read(), stored.read())


def _extension() -> str:
    """The package's built extension, which the helper loads for its scan thread."""
    native = _digest_process.native_path()
    assert native is not None, "the _sha256_thread extension is not built"
    return native


def _answers(members: list[tuple[int, bytes]]) -> tuple[bytes, bytes]:
    """What the helper writes for ``members``, in file order: position and size,
    and the digest's stored form."""
    places = b"".join(struct.pack("<QQ", position, len(data)) for position, data in members)
    return places, sha256s(members)


@pytest.mark.parametrize("extension", ["/nonexistent/_sha256_thread.so", ""])
def test_the_helper_digests_with_hashlib_without_the_extension(
    tmp_path: Path, extension: str
) -> None:
    with open(tmp_path / "out.zip", "w+b") as out:
        members = write_members(ZipWriter(out), 100, seed=8)
    code, status, answers = _run_child(tmp_path / "out.zip", extension)
    assert (code, status) == (0, struct.pack("<Q", 0))
    assert answers == _answers(members)


@pytest.mark.parametrize("native", [True, False], ids=["scan thread", "hashlib"])
def test_the_helper_reads_sizes_from_a_zip64_header(tmp_path: Path, native: bool) -> None:
    with open(tmp_path / "out.zip", "w+b") as out:
        members = write_members(ZipWriter(out), 20, seed=9)
        members.append((zip64_member(out, b"big", b"zip64 sized"), b"zip64 sized"))
        members += write_members(ZipWriter(out), 20, seed=10)  # found past it
    code, _, answers = _run_child(tmp_path / "out.zip", _extension() if native else "")
    assert code == 0 and answers == _answers(members)


def _ask_logged(
    helper: DigestProcess, members: list[tuple[int, bytes]], caplog: pytest.LogCaptureFixture
) -> bytes:
    """:func:`_ask` with the helper's warnings captured, then the helper let go."""
    with caplog.at_level(logging.WARNING, logger=_digest_process.__name__):
        found = ask(helper, members)
    helper.abort()
    return found


def test_the_helper_stops_at_what_is_not_a_member_and_the_writer_digests_the_rest(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, here: list[int]
) -> None:
    with open(tmp_path / "out.zip", "w+b") as out:
        helper = _helper(out)
        writer = ZipWriter(out)
        members = write_members(writer, 1200, seed=11)
        out.write(b"not a member header")  # what the helper must not take for one
        writer._end = out.tell()
        members += write_members(writer, 30, seed=12)
        found = _ask_logged(helper, members, caplog)
    assert found == sha256s(members)
    assert _kept(helper) == 1200 and here == [30]
    assert "status 3" in caplog.text and "the writer computes the rest" in caplog.text


def test_a_killed_helper_leaves_its_digests_to_the_writer(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, here: list[int]
) -> None:
    with open(tmp_path / "out.zip", "w+b") as out:
        helper = _helper(out)
        writer = ZipWriter(out)
        members = write_members(writer, 300, seed=2)
        out.flush()
        _answered(helper, 300)
        helper._spawned().kill()  # type: ignore[union-attr]
        members += write_members(writer, 1000, seed=3)
        found = _ask_logged(helper, members, caplog)
    assert found == sha256s(members)
    assert sum(here) == 1300 - _kept(helper) and sum(here) >= 1000
    assert "the writer computes the rest" in caplog.text


def test_a_range_past_the_end_is_a_taco_error_not_a_wrong_digest(tmp_path: Path) -> None:
    with open(tmp_path / "out.zip", "w+b") as out:
        helper = _helper(out)
        members = write_members(ZipWriter(out), 1200, seed=4, sizes=(100,))
        position, data = members[-1]
        assert ask(helper, members) == sha256s(members)
        with pytest.raises(
            TacoIOError, match=rf"member of 110 bytes at {position} of the output: read 100"
        ):
            ask(helper, [(position, data + bytes(10))])  # a size the helper did not find
        helper.abort()


def test_a_write_that_ends_before_the_helper_answers_does_not_wait_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, here: list[int]
) -> None:
    # a helper that takes a second to start (a loaded machine); the write is 200 members
    monkeypatch.setattr(
        _digest_process, "_CHILD", "import time; time.sleep(1)\n" + _digest_process._CHILD
    )
    before = _children()
    with open(tmp_path / "out.zip", "w+b") as out:
        helper = _helper(out)
        members = write_members(ZipWriter(out), 200, seed=13)
        found = ask(helper, members)
        helper.abort()
    assert found == sha256s(members)
    assert _kept(helper) == 0 and here == [200]  # let go: digested here
    assert _reaped(before)


def test_the_helper_loads_the_extension_and_nothing_else(tmp_path: Path) -> None:
    with open(tmp_path / "out.zip", "w+b") as out:
        helper = _helper(out)
        child = helper._spawned()
        assert child is not None
        members = write_members(ZipWriter(out), 300, seed=14)
        out.flush()
        _answered(helper, 300)
        maps = Path(f"/proc/{child.pid}/maps").read_text()
        found = ask(helper, members)
        helper.abort()
    native = _digest_process.native_path()
    assert native is not None and native in maps
    assert "_hashlib" not in maps  # hashlib is imported only without the extension
    assert found == sha256s(members)


def test_the_helper_reads_only_what_left_the_writers_buffer(
    tmp_path: Path, here: list[int]
) -> None:
    with open(tmp_path / "out.zip", "w+b", buffering=1 << 20) as out:
        helper = _helper(out)
        members = write_members(ZipWriter(out), 2000, seed=15, sizes=(100,))  # 0.3 MB: all buffered
        assert helper._spawned() is not None
        time.sleep(0.1)  # the helper runs, and finds nothing in the file
        assert os.fstat(out.fileno()).st_size == 0 and _found(helper) == 0
        found = ask(helper, members)  # flushes, then waits for the helper
        helper.abort()
    assert found == sha256s(members)
    assert _kept(helper) == 2000 and here == []


def test_no_helper_without_a_python_to_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "executable", "/usr/bin/qgis")  # embedded: not a Python
    assert start_digest_process("sha256", 0, lambda: None) is None
    monkeypatch.setattr(sys, "executable", "")
    assert start_digest_process("sha256", 0, lambda: None) is None


def test_only_sha256_goes_to_a_helper() -> None:
    # CRC-32C and XXH3 of a small member cost less than telling a helper about it
    assert start_digest_process("xxh3", 0, lambda: None) is None
    assert start_digest_process("crc32c", 0, lambda: None) is None


def _taco(folder: Path, count: int) -> tuple[Taco, dict[str, bytes]]:
    folder.mkdir()
    contents = {f"s{i:04d}": os.urandom(i * 37 % 9000) for i in range(count)}
    for name, data in contents.items():
        (folder / name).write_bytes(data)
    samples = [Sample(name, folder / name) for name in contents]
    taco = Taco(
        Tortilla(samples), id="helper", dataset_version="1", description="helper digests",
        licenses=["CC0-1.0"], providers=[{"name": "t"}], tasks=["other"],
    )  # fmt: skip
    return taco, contents


@pytest.mark.parametrize(
    ("helper", "kind"),
    [
        ("process", DigestProcess),
        ("no python", DigestScan),
        ("no python, output not readable", DigestThread),
        ("neither", type(None)),
    ],
)
def test_create_writes_the_same_sha256_column_whoever_digests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, helper: str, kind: type
) -> None:
    if helper != "process":  # no Python to run a helper (embedded, as in QGIS)
        monkeypatch.setattr(_digest_process, "_interpreter", lambda: None)
    if helper == "no python, output not readable":  # written through a write-only descriptor
        monkeypatch.setattr(zip_container, "readable_fd", lambda f: None)
    if helper == "neither":  # and the extension was not built
        monkeypatch.setattr(_digest_thread, "NATIVE_SHA256", "taco_gdal._not_built")
        monkeypatch.setattr(_output_digests, "NATIVE_SHA256", "taco_gdal._not_built")
    started: list[MemberDigests | None] = []

    def start(*args: Any) -> MemberDigests | None:  # the real choice, only observed
        started.append(start_member_digests(*args))
        return started[-1]

    monkeypatch.setattr(zip_container, "start_member_digests", start)
    taco, contents = _taco(tmp_path / "src", 1500)
    before = _children()
    out = create(taco, tmp_path / "out.tacozip", checksum="sha256", quiet=True)[0]
    assert _reaped(before)
    assert len(started) == 1 and type(started[0]) is kind
    table = read_zip_metadata(out).levels[0]
    expected = [
        f"sha256:{hashlib.sha256(contents[i]).hexdigest()}" for i in table.column("id").to_pylist()
    ]
    assert table.column(CHECKSUM).to_pylist() == expected


def test_a_failed_write_leaves_no_helper_behind(tmp_path: Path) -> None:
    taco, _ = _taco(tmp_path / "src", 300)
    (tmp_path / "src" / "s0200").unlink()  # vanishes before the write reaches it
    before = _children()
    with pytest.raises(TacoError):
        create(taco, tmp_path / "out.tacozip", checksum="sha256", quiet=True)
    assert _reaped(before)
    assert not (tmp_path / "out.tacozip").exists()


def test_a_helper_whose_pipes_are_past_fd_setsize_still_waits(tmp_path: Path) -> None:
    # a process with many files open (a read-ahead window, a server) gets pipes above
    # 1024, where select() refuses them: the blocking waits must work there too
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 2048 if hard == resource.RLIM_INFINITY else min(hard, 2048)
    assert wanted > 1200, f"the test needs 1,200 descriptors, the hard limit is {hard}"
    resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    null = os.open(os.devnull, os.O_RDONLY)
    held = [os.dup(null) for _ in range(1100)]
    try:
        with open(tmp_path / "out.zip", "w+b") as out:
            helper = _helper(out)
            assert helper._status > 1024 and helper._end > 1024
            members = write_members(ZipWriter(out), 2500, seed=3)
            assert ask(helper, members) == sha256s(members)
            assert _kept(helper) == 2500  # the wait on its status worked
            helper.abort()
    finally:
        for descriptor in [*held, null]:
            os.close(descriptor)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.fixture
def affinity() -> Iterator[set[int]]:
    """This thread's CPUs, given back after the test narrows them."""
    allowed = os.sched_getaffinity(0)
    yield allowed
    os.sched_setaffinity(0, allowed)


def _scan_thread_cpus(pid: int) -> set[int]:
    """The affinity of the helper ``pid``'s native scan thread, once it has started."""
    return wait_for(
        lambda: find_thread_cpus("taco-zip-sha256", pid), f"helper {pid} starts its scan thread"
    )


def test_the_helper_runs_off_the_writers_cpu(tmp_path: Path, affinity: set[int]) -> None:
    assert len(affinity) >= 2, f"the test needs two CPUs, this thread may use {affinity}"
    mine = max(affinity)
    os.sched_setaffinity(0, {mine})
    os.sched_setaffinity(0, affinity)  # free again, but last ran on `mine`
    (main, scan), right = _digest_observed(
        tmp_path / "out.bin",
        200,
        4,
        lambda pid, _fd: (os.sched_getaffinity(pid), _scan_thread_cpus(pid)),
    )
    assert main == affinity - {mine}
    assert scan == affinity - {mine}  # given to the thread, not inherited in a race
    assert right


def test_the_native_thread_runs_off_the_writers_cpu(affinity: set[int]) -> None:
    assert len(affinity) >= 2, f"the test needs two CPUs, this thread may use {affinity}"
    mine = max(affinity)
    os.sched_setaffinity(0, {mine})
    os.sched_setaffinity(0, affinity)  # free again, but last ran on `mine`
    helper = start_member_digests("sha256", None, lambda: None)
    assert isinstance(helper, DigestThread)
    helper.submit(b"abc", 0)
    assert ask(helper, [(0, b"abc")]) == sha256s([(0, b"abc")])  # the thread has run
    placed = thread_cpus("taco-sha256")
    helper.abort()
    assert placed == affinity - {mine}


def test_on_one_cpu_the_writer_digests_in_lanes_on_its_own_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, affinity: set[int]
) -> None:
    started: list[MemberDigests | None] = []

    def start(*args: Any) -> MemberDigests | None:  # the real decision, only observed
        started.append(start_member_digests(*args))
        return started[-1]

    monkeypatch.setattr(zip_container, "start_member_digests", start)
    os.sched_setaffinity(0, {min(affinity)})  # a container or a pinned DataLoader worker
    taco, contents = _taco(tmp_path / "src", 300)
    out = create(taco, tmp_path / "out.tacozip", checksum="sha256", quiet=True)[0]
    assert len(started) == 1 and type(started[0]) is LaneDigests  # no helper: this thread
    table = read_zip_metadata(out).levels[0]
    assert table.column(CHECKSUM).to_pylist() == [
        f"sha256:{hashlib.sha256(contents[i]).hexdigest()}" for i in table.column("id").to_pylist()
    ]


def test_the_writer_goes_on_while_the_helper_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Popen returns only once the child runs the interpreter: held here until the
    # writer has sent 500 members, which it could not do if it started the helper itself
    released, events = threading.Event(), []
    real = subprocess.Popen

    class Held(real):  # type: ignore[valid-type,misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            released.wait(30)
            events.append("helper started")
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", Held)
    with open(tmp_path / "out.zip", "w+b") as out:
        helper = _helper(out)
        members = write_members(ZipWriter(out), 500, seed=13)
        out.flush()
        events.append("members written")
        released.set()
        assert helper._spawned() is not None
        _answered(helper, 500)  # it then found them in the file
        found = ask(helper, members)
        helper.abort()
    assert events == ["members written", "helper started"]
    assert found == sha256s(members)


def test_the_column_is_built_on_the_helpers_answers_without_a_copy(
    tmp_path: Path, here: list[int]
) -> None:
    with open(tmp_path / "out.zip", "w+b") as out:
        helper = _helper(out)
        writer = ZipWriter(out)
        writer.add_bytes("header", b"a member before the samples (the TACO_HEADER)")
        members = write_members(writer, 1500, seed=22, sizes=(100, 4096))
        out.flush()
        _answered(helper, 1500)  # found by the helper, not digested here
        rows = helper.stored_at(
            np.array([p for p, _ in members], np.int64), np.array([len(d) for _, d in members])
        )
        helper.abort()
    assert rows.tobytes() == sha256s(members) and here == []
    base: object = rows
    while isinstance(base, np.ndarray | memoryview):
        base = base.base if isinstance(base, np.ndarray) else base.obj
    assert isinstance(base, mmap.mmap)  # the helper's file, mapped: nothing formatted here


_WRITER_KILLED = r"""
import os, sys, time
from taco_gdal.write._digest_process import start_digest_process
out = open(sys.argv[1], "w+b")
helper = start_digest_process("sha256", out.fileno(), out.flush)
child = helper._spawned()
print(child.pid, flush=True)
time.sleep(60)  # killed here, before it ever tells the helper where the members end
"""


def _ended(pid: int) -> bool:
    """True when process ``pid`` is gone or a zombie (it has exited)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in status


def test_a_helper_whose_writer_is_killed_exits(tmp_path: Path) -> None:
    # the helper's main thread waits in a blocking read of the writer's pipe while its
    # scan thread naps: the writer's death closes the pipe, and the helper must end
    with subprocess.Popen(
        [sys.executable, "-c", _WRITER_KILLED, str(tmp_path / "out.zip")],
        stdout=subprocess.PIPE,
        cwd=Path(__file__).resolve().parents[3],
    ) as writer:
        assert writer.stdout is not None
        pid = int(writer.stdout.readline())
        _scan_thread_cpus(pid)  # its scan thread has started: the helper is waiting
        writer.kill()
    wait_for(lambda: _ended(pid), f"helper {pid} ends after its writer was killed")


def test_told_the_members_are_written_the_helper_ends_before_the_writer_asks(
    tmp_path: Path, here: list[int]
) -> None:
    # the writer tells it where the members end once they are written, then goes on
    # to the metadata: the helper digests the last members meanwhile and exits, and
    # the writer's question later only collects its answers
    with open(tmp_path / "out.zip", "w+b") as out:
        helper = _helper(out)
        writer = ZipWriter(out)
        members = write_members(writer, 1500, seed=16)
        out.flush()
        _answered(helper, 1)  # it started: told now, it does not wait for the question
        helper.members_written()
        metadata = writer.add_bytes("METADATA/level0.parquet", os.urandom(5000))  # not its
        child = helper._spawned()
        assert child is not None
        assert child.wait(timeout=30) == 0  # ended with every member digested
        found = ask(helper, members)
        helper.abort()
    assert found == sha256s(members)
    assert _kept(helper) == 1500 and here == []
    assert metadata.data_offset > max(position for position, _ in members)


def test_create_tells_the_helper_once_the_samples_are_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    told: list[tuple[int, bool]] = []
    real_told, real_asked = DigestProcess.members_written, DigestProcess.stored_at

    def members_written(self: DigestProcess) -> None:
        told.append((self._end_of_members(), False))
        real_told(self)

    def stored_at(self: DigestProcess, positions: Any, sizes: Any) -> Any:
        told.append((-1, self._sent is True))  # the end was sent before the question
        return real_asked(self, positions, sizes)

    monkeypatch.setattr(DigestProcess, "members_written", members_written)
    monkeypatch.setattr(DigestProcess, "stored_at", stored_at)
    taco, contents = _taco(tmp_path / "src", 1500)
    out = create(taco, tmp_path / "out.tacozip", checksum="sha256", quiet=True)[0]
    table = read_zip_metadata(out).levels[0]
    assert told[0][0] == max(  # told where the last sample ends
        offset + size
        for offset, size in zip(
            table.column("internal:offset").to_pylist(),
            table.column("internal:size").to_pylist(),
            strict=True,
        )
    )
    assert told[1:] == [(-1, True)]
    assert table.column(CHECKSUM).to_pylist() == [
        f"sha256:{hashlib.sha256(contents[i]).hexdigest()}" for i in table.column("id").to_pylist()
    ]
