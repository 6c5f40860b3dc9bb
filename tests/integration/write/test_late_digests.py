"""Late digests: SHA-256 finished by the digest thread while the ZIP writer copies on.

``ZipWriter(late_digests=True)`` (the TACO ZIP writer's setting) hands a member's
SHA-256 to the digest thread, which reads the member back from the output's
pages after the copy has moved on; when that thread is behind, the writer
digests inline.  Both ways must store the digest of exactly the bytes written
(checked with hashlib on the source files) and leave the archive byte for byte
as a writer without digests writes it.
"""

from __future__ import annotations

import gc
import hashlib
import os
import random
import sys
import threading
import zipfile
import zlib
from pathlib import Path

import pytest

from taco_gdal import _sha256_thread
from taco_gdal.errors import TacoIOError, TacoValidationError
from taco_gdal.format.checksum import StreamingDigest, raw_digests
from taco_gdal.write import _copy, _late
from taco_gdal.write._late import GrowingRange, LateDigest, LateDigests, settle_digests
from taco_gdal.write.zipstream import LOCAL_BLOCK, MemberInfo, ZipWriter
from tests.forking import in_forked_child

MIB = 1024 * 1024


def _sources(folder: Path) -> dict[str, bytes]:
    """Every local copy path: empty, in memory, one block + 1, several MiB, past a 16 MiB
    read-back window at an unaligned position, and sparse (copied in chunks, inline)."""
    folder.mkdir()
    contents = {
        "empty": b"",
        "tiny": b"abc",
        "block1": os.urandom(LOCAL_BLOCK + 1),
        "five": os.urandom(5 * MIB + 3),
        "window": os.urandom(_late._FOLLOW_STEP + 12345),
    }
    for name, data in contents.items():
        (folder / name).write_bytes(data)
    with open(folder / "sparse", "wb") as f:
        f.write(b"head" * 1024)
        f.seek(4 * MIB, os.SEEK_CUR)
        f.write(b"tail" * 1024)
    contents["sparse"] = (folder / "sparse").read_bytes()
    return contents


def _write(path: Path, folder: Path, names: list[str], **options: object) -> list[MemberInfo]:
    digest = options.pop("digest", None)
    with open(path, "w+b") as f:
        writer = ZipWriter(f, mtime=0, **options)  # type: ignore[arg-type]
        infos = [writer.add_file(f"DATA/{n}", str(folder / n), digest=digest) for n in names]
        infos.append(writer.add_bytes("DATA/memory", b"in memory" * 1000, digest=digest))
        writer.close()
    return infos


@pytest.mark.parametrize("backlog", [0, 1 << 40], ids=["thread-busy", "thread-free"])
def test_late_sha256_is_the_digest_of_the_bytes_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backlog: int
) -> None:
    # backlog 0: the digest thread always counts as behind, every digest is inline;
    # a huge backlog: every digest of a dense file or of bytes is read back late
    monkeypatch.setattr(_late, "_LATE_BACKLOG", backlog)
    contents = _sources(tmp_path / "src")
    names = list(contents)
    infos = _write(
        tmp_path / "late.zip", tmp_path / "src", names, digest="sha256", late_digests=True
    )
    digests = settle_digests([info.digest for info in infos])
    expected = [f"sha256:{hashlib.sha256(contents[n]).hexdigest()}" for n in names]
    expected.append(f"sha256:{hashlib.sha256(b'in memory' * 1000).hexdigest()}")
    assert digests == expected
    with zipfile.ZipFile(tmp_path / "late.zip") as z:
        assert z.testzip() is None
        assert [z.read(f"DATA/{n}") for n in names] == [contents[n] for n in names]
    # same bytes as the inline digests and as no digest at all
    _write(tmp_path / "inline.zip", tmp_path / "src", names, digest="sha256")
    _write(tmp_path / "plain.zip", tmp_path / "src", names)
    late = (tmp_path / "late.zip").read_bytes()
    assert late == (tmp_path / "inline.zip").read_bytes() == (tmp_path / "plain.zip").read_bytes()


def test_late_digests_are_late_only_when_the_thread_keeps_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_late, "_LATE_BACKLOG", 1 << 40)
    contents = _sources(tmp_path / "src")
    infos = _write(
        tmp_path / "a.zip", tmp_path / "src", ["five"], digest="sha256", late_digests=True
    )
    assert isinstance(infos[0].digest, LateDigest)
    monkeypatch.setattr(_late, "_LATE_BACKLOG", 0)
    infos = _write(
        tmp_path / "b.zip", tmp_path / "src", ["five"], digest="sha256", late_digests=True
    )
    assert infos[0].digest == f"sha256:{hashlib.sha256(contents['five']).hexdigest()}"


@pytest.mark.parametrize("algorithm", ["crc32c", "xxh3"])
def test_fast_digests_stay_inline(tmp_path: Path, algorithm: str) -> None:
    _sources(tmp_path / "src")
    infos = _write(
        tmp_path / "a.zip", tmp_path / "src", ["five"], digest=algorithm, late_digests=True
    )
    assert all(isinstance(info.digest, str) for info in infos)


def test_write_only_output_is_digested_inline(tmp_path: Path) -> None:
    # nothing can be read back from a write-only descriptor: the copy digests as it goes
    contents = _sources(tmp_path / "src")
    with open(tmp_path / "out.zip", "wb") as f:
        writer = ZipWriter(f, late_digests=True)
        info = writer.add_file("DATA/five", str(tmp_path / "src" / "five"), digest="sha256")
        writer.close()
    assert info.digest == f"sha256:{hashlib.sha256(contents['five']).hexdigest()}"


def test_many_small_members_in_batches(tmp_path: Path) -> None:
    blobs = [os.urandom(n) for n in range(0, 300 * 997, 997)]  # several batches, a partial one
    fd = os.open(tmp_path / "out", os.O_CREAT | os.O_RDWR, 0o644)
    try:
        late = LateDigests("sha256", fd)
        values = settle_digests([late.of_bytes(b) for b in blobs])
        late.close()
    finally:
        os.close(fd)
    assert values == [f"sha256:{hashlib.sha256(b).hexdigest()}" for b in blobs]


def test_a_member_that_cannot_be_read_back_fails_at_its_value(tmp_path: Path) -> None:
    (tmp_path / "out").write_bytes(b"x" * 1000)
    fd = os.open(tmp_path / "out", os.O_RDWR)
    try:
        late = LateDigests("sha256", fd)
        past_the_end = late.of_range(500, 1000)
        fine = late.of_range(0, 1000)
        with pytest.raises(TacoIOError, match=r"expected 500 more bytes at offset 1000"):
            past_the_end.value()
        assert fine.value() == f"sha256:{hashlib.sha256(b'x' * 1000).hexdigest()}"
        late.close()
    finally:
        os.close(fd)


def _asleep_until(growing: GrowingRange, position: int) -> bool:
    """True once the digest thread sleeps until ``position`` is written (10 s at most)."""
    done = threading.Event()
    for _ in range(1000):
        if growing._wanted == position:
            return True
        done.wait(0.01)
    return False


def test_a_growing_member_is_digested_while_it_is_written(tmp_path: Path) -> None:
    # the digest thread follows the copy: it has digested each 4 MiB step and sleeps
    # for the next before the writer writes it, so at the end only the last step is left
    step = _late._FOLLOW_STEP
    data = os.urandom(3 * step - 100)
    position = 4096 + 7
    fd = os.open(tmp_path / "out", os.O_CREAT | os.O_RDWR, 0o644)
    try:
        late = LateDigests("sha256", fd)
        value, growing = late.of_growing(position, len(data))
        assert _asleep_until(growing, position + step)  # nothing written yet
        for at in range(0, len(data), step):
            piece = data[at : at + step]
            os.pwrite(fd, piece, position + at)
            growing.advance(position + at + len(piece))
            if at + step < len(data):
                assert _asleep_until(growing, min(position + at + 2 * step, growing.end))
        assert value.value() == f"sha256:{hashlib.sha256(data).hexdigest()}"
        late.close()
    finally:
        os.close(fd)


def test_an_abandoned_copy_fails_its_digest_and_frees_the_thread(tmp_path: Path) -> None:
    size = 2 * _late._FOLLOW_STEP
    fd = os.open(tmp_path / "out", os.O_CREAT | os.O_RDWR, 0o644)
    try:
        os.pwrite(fd, b"y" * MIB, 0)
        late = LateDigests("sha256", fd)
        value, growing = late.of_growing(0, size)
        try:
            growing.advance(MIB)
            assert _asleep_until(growing, _late._FOLLOW_STEP)
        finally:
            growing.abandon()
        stopped = rf"member at 0 \({size} bytes\) stopped at byte {MIB}"
        with pytest.raises(TacoIOError, match=stopped):
            value.value()
        after = late.of_range(0, MIB)  # the digest thread is free for the next members
        assert after.value() == f"sha256:{hashlib.sha256(b'y' * MIB).hexdigest()}"
        late.close()
    finally:
        os.close(fd)


def test_a_copy_failing_mid_member_leaves_the_digest_thread_free(tmp_path: Path) -> None:
    # the source shrinks while it is copied (truncated from the progress callback after
    # the first block): the copy fails, and the member's late digest must not hold the
    # process's digest thread waiting for bytes that will never be written
    source = tmp_path / "shrinking"
    source.write_bytes(os.urandom(6 * MIB))

    def truncate(n: int) -> None:
        os.truncate(source, MIB)

    with open(tmp_path / "a.zip", "w+b") as f:
        writer = ZipWriter(f, mtime=0, on_bytes=truncate, late_digests=True)
        with pytest.raises(TacoIOError, match=r"shrinking"):
            writer.add_file("DATA/shrinking", str(source), digest="sha256")
    free = threading.Event()
    _copy._digest_worker().submit(free.set)
    assert free.wait(10), "the digest thread still waits for the failed member's bytes"
    again = _sources(tmp_path / "src")
    infos = _write(
        tmp_path / "b.zip", tmp_path / "src", ["five"], digest="sha256", late_digests=True
    )
    assert settle_digests([infos[0].digest]) == [
        f"sha256:{hashlib.sha256(again['five']).hexdigest()}"
    ]


def _points_at(fd: int, path: Path) -> bool:
    try:
        return os.readlink(f"/proc/self/fd/{fd}") == str(path)
    except OSError:
        return False


def test_an_abandoned_writer_closes_its_read_back_descriptor(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.write_bytes(os.urandom(3 * MIB))
    fd = os.open(out, os.O_RDWR)
    try:
        late = LateDigests("sha256", fd)
        late.of_range(0, 3 * MIB)
        duplicate = late._fd
        assert duplicate is not None and duplicate != fd and _points_at(duplicate, out)
        late.wait()
        del late
        gc.collect()
        # the close is queued behind any job still referring to it: wait for the thread
        for _ in range(100):
            LateDigests("sha256", None).wait()
            if not _points_at(duplicate, out):
                break
        assert not _points_at(duplicate, out)
        assert _points_at(fd, out)  # the caller's descriptor stays open
    finally:
        os.close(fd)


def test_waiting_in_a_forked_child_is_refused(tmp_path: Path) -> None:
    (tmp_path / "out").write_bytes(b"y" * 100)
    fd = os.open(tmp_path / "out", os.O_RDWR)
    late = LateDigests("sha256", fd)
    pending = late.of_range(0, 100)

    def wait_in_child() -> str:
        try:
            late.wait()
        except TacoIOError as exc:
            return str(exc)
        return "waited"

    child = in_forked_child(wait_in_child)
    assert "cannot be awaited in process" in child
    assert pending.value() == f"sha256:{hashlib.sha256(b'y' * 100).hexdigest()}"
    late.close()
    os.close(fd)


def test_a_member_or_two_behind_is_not_busy(tmp_path: Path) -> None:
    # a SHA-256 thread a little slower than the copy is one or two 100 MiB members
    # behind; the writer must keep handing members over (at 16 MiB it digested every
    # few members itself, +43% instead of +25% on 20 x 100 MiB)
    size = 100 * MIB
    (tmp_path / "out").write_bytes(b"")
    os.truncate(tmp_path / "out", 3 * size)  # a hole: read back as zeros, no disk used
    fd = os.open(tmp_path / "out", os.O_RDWR)
    release = threading.Event()
    held = LateDigests("sha256", None)
    held._submit(0, release.wait)  # the digest thread is on another writer's job
    try:
        late = LateDigests("sha256", fd)
        late.of_range(0, size)
        late.of_range(size, size)
        assert not late.busy  # 200 MiB not started
        late.of_range(2 * size, size)
        assert late.busy  # 300 MiB: the writer shares the digests
    finally:
        release.set()
        held.wait()
    late.close()
    os.close(fd)


def test_waiting_helps_the_digest_thread(tmp_path: Path) -> None:
    # the writer's thread takes queued jobs itself: with the digest thread held on a
    # job, wait() still finishes every other one
    (tmp_path / "out").write_bytes(os.urandom(2 * MIB))
    fd = os.open(tmp_path / "out", os.O_RDWR)
    release = threading.Event()
    held = LateDigests("sha256", None)

    def hold() -> None:  # holds the digest thread until released
        release.wait()

    held._submit(0, hold)
    try:
        late = LateDigests("sha256", fd)
        values = [late.of_range(0, 2 * MIB), late.of_range(MIB, MIB)]
        late.flush()
        while (job := late._take()) is not None:  # what wait() does before its final barrier
            job()
        data = (tmp_path / "out").read_bytes()
        assert all(v._result is not None for v in values)  # computed here, not by the thread
        assert [v.value() for v in values] == [
            f"sha256:{hashlib.sha256(data).hexdigest()}",
            f"sha256:{hashlib.sha256(data[MIB:]).hexdigest()}",
        ]
    finally:
        release.set()
        held.wait()
    late.close()
    os.close(fd)


def test_member_buffers_are_reused_and_bounded(tmp_path: Path) -> None:
    late = LateDigests("sha256", None)
    assert late.buffer(_late._LATE_BUFFERED + 1) is None  # larger members are read back
    first = late.buffer(1000)
    assert first is not None and len(first) == MIB
    first[:3] = b"abc"
    value = late.of_buffer(first, 3)
    assert value.value() == f"sha256:{hashlib.sha256(b'abc').hexdigest()}"
    assert late.buffer(MIB) is first  # handed back by the digest thread, reused
    held = [late.buffer(MIB) for _ in range(_late._LATE_BUFFERS // MIB - 1)]
    assert all(b is not None for b in held)
    assert late.buffer(1) is None  # 16 MiB of buffers wait for digests: read back instead
    late.close()


def test_members_in_their_buffers_are_digested_together_in_lanes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # one SHA-256 a member barely kept up with copies of 1 MiB samples; three at once in
    # lanes leave the other core half idle.  Two 4 MiB members go as soon as they are there.
    calls: list[list[int]] = []
    many = raw_digests("sha256")
    assert many is _sha256_thread.sha256_many  # the extension's lanes

    def recorded(views: list[memoryview]) -> bytes:
        calls.append([len(v) for v in views])
        return bytes(many(views))

    monkeypatch.setattr(_late, "raw_digests", lambda algorithm: recorded)
    late = LateDigests("sha256", None)
    datas = [os.urandom(n) for n in (MIB, 5, MIB - 1, 4 * MIB, 4 * MIB, 3)]
    values = []
    for data in datas:
        buffer = late.buffer(len(data))
        assert buffer is not None
        buffer[: len(data)] = data
        values.append(late.of_buffer(buffer, len(data)))
    assert [v.value() for v in values] == [f"sha256:{hashlib.sha256(d).hexdigest()}" for d in datas]
    # three, then two of 4 MiB (8 MiB: sent at once), then the last alone at the end
    assert calls == [[MIB, 5, MIB - 1], [4 * MIB, 4 * MIB]]
    assert late.buffer(4 * MIB) is not None  # every buffer handed back
    late.close()


def test_copy_through_a_whole_member_buffer(tmp_path: Path) -> None:
    data = os.urandom(3 * LOCAL_BLOCK + 5)
    (tmp_path / "src").write_bytes(data)
    into = bytearray(4 * LOCAL_BLOCK)
    src = os.open(tmp_path / "src", os.O_RDONLY)
    dst = os.open(tmp_path / "dst", os.O_CREAT | os.O_WRONLY, 0o644)
    try:
        crc = _copy.copy_fd(src, 0, len(data), dst, 7, into=memoryview(into))
        with pytest.raises(TacoValidationError, match="expected a buffer of"):
            _copy.copy_fd(src, 0, len(data), dst, 7, into=memoryview(into)[:10])
    finally:
        os.close(src)
        os.close(dst)
    assert bytes(into[: len(data)]) == data
    assert (tmp_path / "dst").read_bytes()[7:] == data
    assert crc == zlib.crc32(data)


def test_only_members_above_a_block_held_in_memory_are_late(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a small member's digest stays on the writing thread (a GIL hand-off per member costs
    # more than its SHA-256); a large one (a remote sample fetched whole) goes late
    monkeypatch.setattr(_late, "_LATE_BACKLOG", 1 << 40)
    small, large = os.urandom(LOCAL_BLOCK), os.urandom(LOCAL_BLOCK + 1)
    with open(tmp_path / "out.zip", "w+b") as f:
        writer = ZipWriter(f, late_digests=True)
        infos = [writer.add_bytes(n, d, digest="sha256") for n, d in (("s", small), ("l", large))]
        assert isinstance(infos[0].digest, str) and isinstance(infos[1].digest, LateDigest)
        assert settle_digests([i.digest for i in infos]) == [
            f"sha256:{hashlib.sha256(d).hexdigest()}" for d in (small, large)
        ]
        writer.close()


def _lane_calls(monkeypatch: pytest.MonkeyPatch) -> list[list[int]]:
    """Every feed of the digest thread from now on: the bytes given to each stream at once
    (negative for a stream that is not a native one, fed alone by hashlib)."""
    calls: list[list[int]] = []
    update = _late._update_lanes

    def recorded(streams: list[object], buffers: list[memoryview]) -> None:
        native = [not isinstance(s, StreamingDigest) for s in streams]
        calls.append([len(b) if n else -len(b) for b, n in zip(buffers, native, strict=True)])
        update(streams, buffers)  # type: ignore[arg-type]

    monkeypatch.setattr(_late, "_update_lanes", recorded)
    return calls


def test_the_rest_of_a_whole_member_and_the_start_of_the_next_go_in_lanes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # one SHA-256 cannot follow a copy faster than itself; two, one per member, can: once
    # a member is whole, its rest is digested together with what is written of the next
    step = _late._FOLLOW_STEP
    first, second = os.urandom(step + 5000), os.urandom(2 * step + 3)
    calls = _lane_calls(monkeypatch)
    fd = os.open(tmp_path / "out", os.O_CREAT | os.O_RDWR, 0o644)
    release = threading.Event()
    held = LateDigests("sha256", None)
    held._submit(0, release.wait)  # the digest thread is busy until both members are there
    try:
        late = LateDigests("sha256", fd)
        os.pwrite(fd, first, 0)
        value1, growing1 = late.of_growing(0, len(first))
        growing1.advance(growing1.end)
        value2, growing2 = late.of_growing(len(first), len(second))
        os.pwrite(fd, second[:step], len(first))
        growing2.advance(len(first) + step)
    finally:
        release.set()
    try:
        assert _asleep_until(growing2, len(first) + 2 * step)  # its first step is digested
        assert [step, step] in calls  # ...with the first member's, at once
        os.pwrite(fd, second[step:], len(first) + step)
        growing2.advance(growing2.end)
    finally:
        growing2.abandon()  # if it failed: the digest thread must not wait for it forever
    assert [value1.value(), value2.value()] == [
        f"sha256:{hashlib.sha256(first).hexdigest()}",
        f"sha256:{hashlib.sha256(second).hexdigest()}",
    ]
    late.close()
    held.wait()
    os.close(fd)


@pytest.mark.parametrize("native", [True, False], ids=["lanes", "hashlib"])
def test_many_members_followed_by_both_threads_agree_with_hashlib(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, native: bool
) -> None:
    # tiny steps: members are fed in lanes or alone, by the digest thread and by the
    # writer's thread while it waits (a member's own job and the job before it share its
    # stream under its lock); without the extension every member is a hashlib digest
    if not native:
        monkeypatch.setitem(sys.modules, "taco_gdal._sha256_thread", None)
    monkeypatch.setattr(_late, "_FOLLOW_STEP", 64 * 1024)
    monkeypatch.setattr(_late, "_LATE_BUFFERED", 0)  # every member is read back
    monkeypatch.setattr(_late, "_LATE_BACKLOG", 1 << 40)
    calls = _lane_calls(monkeypatch)
    rng = random.Random(11)
    folder = tmp_path / "src"
    folder.mkdir()
    contents = {}
    for i in range(30):
        contents[f"m{i:02d}"] = rng.randbytes(rng.randrange(LOCAL_BLOCK + 1, 3 * MIB))
        (folder / f"m{i:02d}").write_bytes(contents[f"m{i:02d}"])
    infos = _write(tmp_path / "a.zip", folder, list(contents), digest="sha256", late_digests=True)
    assert all(isinstance(info.digest, LateDigest) for info in infos[:-1])
    digests = settle_digests([info.digest for info in infos[:-1]])
    assert digests == [f"sha256:{hashlib.sha256(d).hexdigest()}" for d in contents.values()]
    # native streams, or hashlib's; whether two go in lanes here depends on which thread
    # is ahead (the test above makes it certain)
    fed = [n for call in calls for n in call]
    assert fed and (min(fed) >= 0 if native else max(fed) <= 0), calls[:9]
    with zipfile.ZipFile(tmp_path / "a.zip") as z:
        assert z.testzip() is None
