"""write/_digest_process.py: SHA-256 of small members computed by a real helper process.

Every digest is checked against hashlib on the bytes written; the helper is
started for real (``python -I -S``), killed for real, and refused for real (an
executable that is not Python), and no helper outlives its writer.
"""

from __future__ import annotations

import hashlib
import logging
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from taco_gdal import _sha256_thread
from taco_gdal.errors import TacoError, TacoIOError
from taco_gdal.format.names import CHECKSUM
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.write import _digest_process, _digest_thread, create, zip_container
from taco_gdal.write._cpus import other_cpus
from taco_gdal.write._digest_process import DigestProcess, start_digest_process
from taco_gdal.write._digest_thread import (
    DigestThread,
    LaneDigests,
    MemberDigests,
    start_member_digests,
)
from taco_gdal.write._sources import read_zip_metadata
from tests.threads import thread_cpus

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


def _members(path: Path, count: int, seed: int) -> list[tuple[int, bytes]]:
    rng = random.Random(seed)
    members, position = [], 0
    with open(path, "wb") as f:
        for _ in range(count):
            data = rng.randbytes(rng.choice([0, 1, 100, 4096, 20_000]))
            f.write(data)
            members.append((position, data))
            position += len(data)
    return members


def _submit(helper: DigestProcess, members: list[tuple[int, bytes]]) -> list[int]:
    """Submit ``members`` (position, bytes) in order; their numbers."""
    return [helper.submit(data, position) for position, data in members]


def _helper(fd: int) -> DigestProcess:
    helper = start_digest_process("sha256", fd, lambda: None, other_cpus())
    assert helper is not None, "a helper process must start where Python runs"
    return helper


def _sha256s(members: list[tuple[int, bytes]]) -> bytes:
    return b"".join(hashlib.sha256(data).digest() for _, data in members)


def test_every_digest_comes_back_in_order_past_the_in_flight_limit(tmp_path: Path) -> None:
    members = _members(tmp_path / "out.bin", 2500, seed=1)  # > 2 x the 1024 in flight
    before = _children()
    fd = os.open(tmp_path / "out.bin", os.O_RDONLY)
    try:
        helper = _helper(fd)
        assert helper._spawned() is not None
        assert len(_children() - before) == 1
        numbers = _submit(helper, members)
        found = helper.digests()
        helper.close()
    finally:
        os.close(fd)
    assert numbers == list(range(2500))
    assert found == _sha256s(members)
    assert _reaped(before)


def _digest_observed(
    path: Path, count: int, seed: int, look: Callable[[int, int], T]
) -> tuple[T, bool]:
    """``look(helper_pid, output_fd)`` on a helper started for ``count`` members written to
    ``path``; and whether the digests it returned are hashlib's."""
    members = _members(path, count, seed=seed)
    fd = os.open(path, os.O_RDONLY)
    try:
        helper = _helper(fd)
        child = helper._spawned()
        assert child is not None
        seen = look(child.pid, fd)
        _submit(helper, members)
        found = helper.digests()
        helper.close()
    finally:
        os.close(fd)
    return seen, found == _sha256s(members)


def _cmdline(pid: int, deadline: float = 10.0) -> list[bytes]:
    """``pid``'s command line once the kernel shows it: ``Popen`` returns as soon as the
    child's exec closed its descriptors, and for a moment after that ``/proc/<pid>/cmdline``
    is still empty (the new program's arguments are not in place yet)."""
    until = time.monotonic() + deadline
    while not (raw := Path(f"/proc/{pid}/cmdline").read_bytes()):
        assert time.monotonic() < until, f"process {pid} shows no command line"
        time.sleep(0.001)
    return raw.rstrip(b"\0").split(b"\0")


def test_the_helper_digests_in_lanes_with_the_packages_extension(tmp_path: Path) -> None:
    def argv(pid: int, fd: int) -> tuple[list[bytes], bool, str]:
        args = _cmdline(pid)
        output = os.path.samestat(os.fstat(fd), os.stat(f"/proc/{pid}/fd/{int(args[-3])}"))
        return args, output, os.readlink(f"/proc/{pid}/fd/{int(args[-1])}")

    (args, output, wake), right = _digest_observed(tmp_path / "out.bin", 400, 7, argv)
    native = _digest_process.native_path()
    assert native is not None and Path(native).samefile(_sha256_thread.__file__)
    assert args[-2] == native.encode()
    assert output  # the descriptor it reads is the writer's output
    assert wake.startswith("pipe:")  # the writer's pokes: the helper naps between requests
    assert right


@pytest.mark.parametrize("extension", ["/nonexistent/_sha256_thread.so", None])
def test_the_helper_digests_with_hashlib_without_the_extension(
    tmp_path: Path, extension: str | None
) -> None:
    members = _members(tmp_path / "out.bin", 100, seed=8)
    requests = b"".join(
        _digest_process._REQUEST.pack(position, len(data)) for position, data in members
    )
    with open(tmp_path / "out.bin", "rb") as output:
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", _digest_process._CHILD, str(output.fileno()),
             *filter(None, [extension])],
            input=requests, capture_output=True, pass_fds=(output.fileno(),), timeout=60,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == _sha256s(members)


def test_a_killed_helper_leaves_its_digests_to_the_writer(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    members = _members(tmp_path / "out.bin", 600, seed=2)
    fd = os.open(tmp_path / "out.bin", os.O_RDONLY)
    try:
        helper = _helper(fd)
        _submit(helper, members[:300])
        helper._spawned().kill()  # type: ignore[union-attr]
        with caplog.at_level(logging.WARNING, logger=_digest_process.__name__):
            _submit(helper, members[300:])
            found = helper.digests()
        helper.close()
    finally:
        os.close(fd)
    assert found == _sha256s(members)
    assert "the writer computes the rest" in caplog.text


def _answered(helper: DigestProcess) -> None:
    """Wait until the helper has sent back every digest asked so far (it has started)."""
    helper._send(len(helper._batch))
    deadline = time.monotonic() + 30
    while helper._owed and time.monotonic() < deadline:
        helper._receive(until=helper._owed_members())
        time.sleep(0.005)
    assert not helper._owed, "the helper did not answer within 30 s"


def test_a_range_past_the_end_is_a_taco_error_not_a_wrong_digest(tmp_path: Path) -> None:
    (tmp_path / "out.bin").write_bytes(b"abc")
    fd = os.open(tmp_path / "out.bin", os.O_RDONLY)
    try:
        helper = _helper(fd)
        helper.submit(b"abc", 0)
        _answered(helper)  # the helper's own short read is what is tested
        helper.submit(b"bc" + bytes(8), 1)  # 10 bytes said to be at 1: two are there
        with pytest.raises(TacoIOError, match=r"member of 10 bytes at 1 of the output: read 2"):
            helper.digests()
        helper.abort()
    finally:
        os.close(fd)


def test_a_write_that_ends_before_the_helper_answers_does_not_wait_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a helper that takes a second to start (a loaded machine); the write is 200 members
    monkeypatch.setattr(
        _digest_process, "_CHILD", "import time; time.sleep(1)\n" + _digest_process._CHILD
    )
    members = _members(tmp_path / "out.bin", 200, seed=11)
    before = _children()
    fd = os.open(tmp_path / "out.bin", os.O_RDONLY)
    try:
        helper = _helper(fd)
        _submit(helper, members)
        found = helper.digests()
        stopped = helper._stopped  # digested here: the helper was let go
        helper.close()
    finally:
        os.close(fd)
    assert found == _sha256s(members)
    assert stopped
    assert _reaped(before)


def test_the_helper_loads_the_extension_and_nothing_else(tmp_path: Path) -> None:
    def mapped(pid: int) -> str:
        return Path(f"/proc/{pid}/maps").read_text()

    members = _members(tmp_path / "out.bin", 300, seed=12)
    fd = os.open(tmp_path / "out.bin", os.O_RDONLY)
    try:
        helper = _helper(fd)
        child = helper._spawned()
        assert child is not None
        _submit(helper, members)
        _answered(helper)
        maps = mapped(child.pid)
        found = helper.digests()
        helper.close()
    finally:
        os.close(fd)
    native = _digest_process.native_path()
    assert native is not None and native in maps
    assert "_hashlib" not in maps  # hashlib is imported only without the extension
    assert found == _sha256s(members)


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
    [("process", DigestProcess), ("no python", DigestThread), ("neither", type(None))],
)
def test_create_writes_the_same_sha256_column_whoever_digests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, helper: str, kind: type
) -> None:
    if helper != "process":  # no Python to run a helper (embedded, as in QGIS)
        monkeypatch.setattr(_digest_process, "_interpreter", lambda: None)
    if helper == "neither":  # and the extension was not built
        monkeypatch.setattr(_digest_thread, "NATIVE_SHA256", "taco_gdal._not_built")
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
        members = _members(tmp_path / "out.bin", 2500, seed=3)
        fd = os.open(tmp_path / "out.bin", os.O_RDONLY)
        try:
            helper = _helper(fd)
            assert helper._answers > 1024
            numbers = _submit(helper, members)
            assert helper.digests() == _sha256s(members) and numbers[-1] == 2499
            helper.close()
        finally:
            os.close(fd)
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


def test_the_helper_runs_off_the_writers_cpu(tmp_path: Path, affinity: set[int]) -> None:
    assert len(affinity) >= 2, f"the test needs two CPUs, this thread may use {affinity}"
    mine = max(affinity)
    os.sched_setaffinity(0, {mine})
    os.sched_setaffinity(0, affinity)  # free again, but last ran on `mine`
    placed, right = _digest_observed(
        tmp_path / "out.bin", 200, 4, lambda pid, _fd: os.sched_getaffinity(pid)
    )
    assert placed == affinity - {mine}
    assert right


def test_the_native_thread_runs_off_the_writers_cpu(affinity: set[int]) -> None:
    assert len(affinity) >= 2, f"the test needs two CPUs, this thread may use {affinity}"
    mine = max(affinity)
    os.sched_setaffinity(0, {mine})
    os.sched_setaffinity(0, affinity)  # free again, but last ran on `mine`
    helper = start_member_digests("sha256", None, lambda: None)
    assert isinstance(helper, DigestThread)
    helper.submit(b"abc", 0)
    assert helper.digests() == hashlib.sha256(b"abc").digest()  # the thread has run
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
    members = _members(tmp_path / "out.bin", 500, seed=13)
    fd = os.open(tmp_path / "out.bin", os.O_RDONLY)
    try:
        helper = _helper(fd)
        numbers = _submit(helper, members)
        events.append("members sent")
        released.set()
        assert helper._spawned() is not None
        _answered(helper)  # the requests waited in the pipe for the helper
        found = helper.digests()
        helper.close()
    finally:
        os.close(fd)
    assert events == ["members sent", "helper started"]
    assert numbers[-1] == 499 and found == _sha256s(members)


def _buffered_members(
    path: Path, sizes: list[int], buffer: int, flushes: list[int]
) -> tuple[DigestProcess, list[tuple[int, bytes]], Any]:
    """A helper fed as the ZIP writer feeds it: members written through a buffered
    file, each submitted as it is written; ``flushes`` counts the helper's flushes."""
    out = open(path, "w+b", buffering=buffer)  # noqa: SIM115 - closed by the caller
    fd = out.fileno()

    def flush() -> None:
        flushes.append(1)
        out.flush()

    helper = start_digest_process(
        "sha256", fd, flush, other_cpus(), lambda: os.lseek(fd, 0, os.SEEK_CUR)
    )
    assert helper is not None
    rng, members, position = random.Random(len(sizes)), [], 0
    for size in sizes:
        data = rng.randbytes(size)
        out.write(data)
        helper.submit(data, position)
        members.append((position, data))
        position += size
    return helper, members, out


def test_members_are_asked_for_once_the_buffer_wrote_them_out(tmp_path: Path) -> None:
    flushes: list[int] = []
    sizes = [random.Random(i).randrange(1, 20_000) for i in range(2000)]
    helper, members, out = _buffered_members(tmp_path / "out.bin", sizes, 256 << 10, flushes)
    with out:
        assert flushes == []  # 31 batches sent: the buffer's own writes made them readable
        assert helper.digests() == _sha256s(members)
        helper.close()


def test_a_buffer_larger_than_many_members_is_flushed_for_the_helper(tmp_path: Path) -> None:
    flushes: list[int] = []
    helper, members, out = _buffered_members(tmp_path / "out.bin", [100] * 2000, 1 << 20, flushes)
    with out:
        # 200 kB never fill the buffer: every 256 members waiting, it is flushed
        assert 0 < len(flushes) <= 2000 // 256
        _answered(helper)
        assert helper.digests() == _sha256s(members)
        helper.close()


def test_answers_are_read_when_many_are_owed(tmp_path: Path) -> None:
    members = _members(tmp_path / "out.bin", 704, seed=14)
    fd = os.open(tmp_path / "out.bin", os.O_RDONLY)
    try:
        helper = _helper(fd)
        _submit(helper, members[:640])
        deadline = time.monotonic() + 30
        while _pending_bytes(helper._answers) < 640 * 32 and time.monotonic() < deadline:
            time.sleep(0.005)
        assert _pending_bytes(helper._answers) == 640 * 32, "the helper did not answer"
        _submit(helper, members[640:])  # a batch sent: 704 owed, the answers wait
        assert helper._done == b"" and helper._owed_members() == 704
        found = helper.digests()
        helper.close()
    finally:
        os.close(fd)
    assert found == _sha256s(members)


def _pending_bytes(fd: int) -> int:
    """Bytes waiting in the pipe ``fd`` (``FIONREAD``)."""
    import array
    import fcntl
    import termios

    count = array.array("i", [0])
    fcntl.ioctl(fd, termios.FIONREAD, count)
    return count[0]
