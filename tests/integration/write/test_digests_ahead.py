"""Digests ahead: large sources announced to the ZIP writer are digested before their copy.

A TACO ZIP write knows its sources before it copies them.  The writer announces
each dense local file above 4 MiB (``ZipWriter.expect``, called by the read-ahead
window), and the digest thread computes its SHA-256 from the source, in lanes
with the other announced files, up to a lead ahead of the copies.  The digest
counts only when the CRC-32 of the bytes digested is the CRC-32 of the bytes
copied, and the file is the one announced; otherwise the member is read back
from the output.  Every case below checks the stored digest with hashlib on the
bytes that are in the archive.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
import time
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import google_crc32c
import pytest
import xxhash

import taco_gdal
from taco_gdal.errors import TacoIOError
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.write import _late, create, zip_container, zipstream
from taco_gdal.write._late import LateDigest, LateDigests, settle_digests
from taco_gdal.write._readahead import read_small_files
from taco_gdal.write.zipstream import LOCAL_BLOCK, ZipWriter

MIB = 1024 * 1024


def _sha256(data: bytes) -> str:
    return f"sha256:{hashlib.sha256(data).hexdigest()}"


def _reference(checksum: str, data: bytes) -> str:
    """``data``'s digest by a library other than taco_gdal's."""
    if checksum == "crc32c":
        return f"crc32c:{google_crc32c.value(data):08x}"
    if checksum == "xxh3":
        return f"xxh3:{xxhash.xxh3_64_hexdigest(data)}"
    return _sha256(data)


def _open_files() -> set[str]:
    """What this process's descriptors point at (other threads may open and close theirs)."""
    opened = set()
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # closed meanwhile
            opened.add(os.readlink(f"/proc/self/fd/{fd}"))
    return opened


def _files(folder: Path, sizes: list[int]) -> dict[Path, bytes]:
    folder.mkdir()
    contents = {folder / f"f{i}.bin": os.urandom(size) for i, size in enumerate(sizes)}
    for path, data in contents.items():
        path.write_bytes(data)
    return contents


@pytest.fixture
def held() -> Iterator[threading.Event]:
    """The digest thread busy until the event is set (set at the end in any case)."""
    release = threading.Event()
    blocker = LateDigests("sha256", None)
    blocker._submit(0, release.wait)
    yield release
    release.set()
    blocker.wait()


def test_announced_files_are_digested_in_lanes_before_their_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, held: threading.Event
) -> None:
    contents = _files(tmp_path / "src", [5 * MIB + 1, 6 * MIB + 7, 7 * MIB, 5 * MIB + 9])
    calls: list[list[int]] = []
    update = _late._update_lanes

    def recorded(streams: list[object], buffers: list[memoryview]) -> None:
        calls.append([len(b) for b in buffers])
        update(streams, buffers)  # type: ignore[arg-type]

    monkeypatch.setattr(_late, "_update_lanes", recorded)
    with open(tmp_path / "out.zip", "w+b") as f:
        writer = ZipWriter(f, mtime=0, late_digests=True)
        for path in contents:
            writer.expect(str(path), os.stat(path), "sha256")
        late = writer._late["sha256"]
        while (job := late._take()) is not None:  # the digest jobs, on this thread, in order
            job()
        held.set()
        infos = [writer.add_file(p.name, str(p), digest="sha256") for p in contents]
        # ready as the copy returns: computed from the sources, before the copies
        assert all(isinstance(i.digest, LateDigest) and i.digest._result for i in infos)
        writer.close()
    # each file's rest goes in lanes with as much of the next two: a with b and c, the rest
    # of b with c and d, the rest of c with d, and the rest of d alone
    a, b, c, d = (len(data) for data in contents.values())
    assert calls == [[a, a, a], [b - a] * 3, [c - b] * 2, [d - (c - a)]]
    assert settle_digests([i.digest for i in infos]) == [_sha256(d) for d in contents.values()]
    with zipfile.ZipFile(tmp_path / "out.zip") as z:
        assert z.testzip() is None
        assert [z.read(p.name) for p in contents] == list(contents.values())


def _claimed(
    tmp_path: Path, data: bytes, held: threading.Event, order: str
) -> tuple[LateDigests, _late.Announced, int]:
    """A source of ``data`` announced and claimed for a copy into a new output; with
    ``digest-first`` its digest is done before the copy is told, else after."""
    source = tmp_path / "src.bin"
    source.write_bytes(data)
    fd = os.open(tmp_path / "out", os.O_CREAT | os.O_RDWR, 0o644)
    late = LateDigests("sha256", fd)
    late.expect(str(source), os.stat(source))
    item = late.claim(str(source), os.stat(source))  # handed to the (held) digest thread
    assert item is not None
    if order == "digest-first":
        held.set()
        late.wait()
        assert item.result is not None
    return late, item, fd


@pytest.mark.parametrize("order", ["digest-first", "copy-first"])
def test_a_copy_that_differs_from_the_bytes_digested_is_read_back(
    tmp_path: Path, held: threading.Event, order: str
) -> None:
    # the file changed between the digest's read and the copy's without its times
    # changing (within one tick of the kernel's clock): the CRC-32s differ, and the
    # digest is of the bytes in the output
    late, item, fd = _claimed(tmp_path, os.urandom(5 * MIB), held, order)
    copied = os.urandom(5 * MIB)
    os.pwrite(fd, copied, 100)
    value = late.of_ahead(item, zlib.crc32(copied), 100)
    held.set()
    assert value.value() == _sha256(copied)
    late.close()
    os.close(fd)


@pytest.mark.parametrize("order", ["digest-first", "copy-first"])
def test_a_copy_equal_to_the_bytes_digested_takes_the_digest(
    tmp_path: Path, held: threading.Event, order: str
) -> None:
    data = os.urandom(5 * MIB + 3)
    late, item, fd = _claimed(tmp_path, data, held, order)
    # nothing written at 0: a read-back would digest zero bytes, not the source's
    value = late.of_ahead(item, zlib.crc32(data), 0)
    held.set()
    assert value.value() == _sha256(data)
    late.close()
    os.close(fd)


def _same_crc(data: bytes) -> bytes:
    """Other bytes of the same length and the same ZIP CRC-32 as ``data`` (CRC-32 is
    linear: four bytes at the end bring any prefix to any value)."""
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
        table.append(c)
    by_top = {t >> 24: i for i, t in enumerate(table)}
    prefix = os.urandom(len(data) - 4)
    register = zlib.crc32(data) ^ 0xFFFFFFFF
    for _ in range(4):  # the CRC register four bytes earlier
        j = by_top[register >> 24]
        register = (((register ^ table[j]) << 8) & 0xFFFFFFFF) | j
    forged = prefix + (register ^ zlib.crc32(prefix) ^ 0xFFFFFFFF).to_bytes(4, "little")
    assert zlib.crc32(forged) == zlib.crc32(data) and forged != data
    return forged


@pytest.mark.parametrize("how", ["replaced", "rewritten-in-place"])
@pytest.mark.parametrize("lead", [MIB, 1 << 30], ids=["before-it-is-sent", "digested"])
def test_a_file_changed_after_it_was_announced_is_copied_the_usual_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str, lead: int
) -> None:
    # the new bytes have the old CRC-32: only the file's identity (inode, size, times)
    # tells that the digest computed ahead is not of the bytes copied
    monkeypatch.setattr(_late, "_lead_limit", lambda: lead)  # 1 MiB: one file ahead at a time
    contents = _files(tmp_path / "src", [5 * MIB, 5 * MIB, 5 * MIB])
    first, second, third = contents
    changed = _same_crc(contents[second])
    with open(tmp_path / "out.zip", "w+b") as f:
        writer = ZipWriter(f, mtime=0, late_digests=True)
        for path in contents:
            writer.expect(str(path), os.stat(path), "sha256")
        late = writer._late["sha256"]
        late.wait()
        # the changed file is digested already, or waits for the lead
        assert (str(second) in {item.path for item in late._unsent}) == (lead == MIB)
        time.sleep(0.02)  # past a tick of the kernel's file clock
        if how == "replaced":  # another file (inode) under the same name
            (tmp_path / "new").write_bytes(changed)
            os.replace(tmp_path / "new", second)
        else:
            with open(second, "r+b") as g:
                g.write(changed)
        infos = [writer.add_file(p.name, str(p), digest="sha256") for p in contents]
        writer.close()
    assert settle_digests([i.digest for i in infos]) == [
        _sha256(contents[first]),
        _sha256(changed),
        _sha256(contents[third]),
    ]


def test_announced_files_wait_for_the_lead(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 10 MiB of lead, files of 6 MiB: one is digested ahead at a time
    monkeypatch.setattr(_late, "_lead_limit", lambda: 10 * MIB)
    contents = _files(tmp_path / "src", [6 * MIB] * 4)
    with open(tmp_path / "out.zip", "w+b") as f:
        writer = ZipWriter(f, mtime=0, late_digests=True)
        for path in contents:
            writer.expect(str(path), os.stat(path), "sha256")
        late = writer._late["sha256"]
        unsent = [len(late._unsent)]
        infos = []
        for path in contents:
            infos.append(writer.add_file(path.name, str(path), digest="sha256"))
            unsent.append(len(late._unsent))
        writer.close()
    assert unsent == [3, 2, 1, 0, 0]
    assert settle_digests([i.digest for i in infos]) == [_sha256(d) for d in contents.values()]


def test_small_and_sparse_files_are_not_announced(tmp_path: Path) -> None:
    small = tmp_path / "small"
    small.write_bytes(os.urandom(4 * MIB))
    sparse = tmp_path / "sparse"
    with open(sparse, "wb") as f:
        f.truncate(8 * MIB)
        f.write(b"x")
    with open(tmp_path / "out.zip", "w+b") as f:
        writer = ZipWriter(f, mtime=0, late_digests=True)
        for path in (small, sparse):
            writer.expect(str(path), os.stat(path), "sha256")
        writer.expect(str(small), os.stat(small), "xxh3")  # inline digests need nothing
        assert not any(late._announced for late in writer._late.values())
        writer.close()


def test_large_files_are_announced_when_the_window_opens_them(tmp_path: Path) -> None:
    contents = _files(tmp_path / "src", [10, LOCAL_BLOCK + 1, 20, 2 * LOCAL_BLOCK])
    paths = [str(p) for p in contents]
    seen: list[tuple[str, int]] = []
    files = read_small_files(
        [paths[0], paths[1], None, "/vsis3/b/k", paths[2], paths[3]],
        LOCAL_BLOCK,
        lambda source, stat: seen.append((source, stat.st_size)),
    )
    first = next(files)
    # both large files are announced before the first file is handed out, and not kept open
    assert seen == [(paths[1], LOCAL_BLOCK + 1), (paths[3], 2 * LOCAL_BLOCK)]
    assert _open_files() & set(paths) == {paths[2]}  # the small file not read yet
    assert [first, *files] == [
        contents[Path(paths[0])],
        None,
        None,
        None,
        contents[Path(paths[2])],
        None,
    ]
    assert not _open_files() & set(paths)


def _create(
    tmp_path: Path, contents: dict[Path, bytes], checksum: str = "sha256"
) -> dict[str, str]:
    """``create()`` with ``checksum``; the stored digest of each sample, by id."""
    taco = Taco(
        Tortilla([Sample(p.stem, p) for p in contents]),
        id="ahead", dataset_version="1", description="digests ahead",
        licenses=["CC0-1.0"], providers=[{"name": "tests"}], tasks=["other"],
    )  # fmt: skip
    [out] = create(taco, tmp_path / "out.tacozip", quiet=True, checksum=checksum)
    with taco_gdal.load(str(out)) as ds:
        column = ds.data.set_index("id")["taco_gdal:checksum"]
    return {k: column[k] for k in column.index}


def _count_claims(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the announced files whose digest a copy takes (real ``of_ahead``)."""
    claimed: list[int] = []
    of_ahead = LateDigests.of_ahead

    def counted(self: LateDigests, item: _late.Announced, crc: int, position: int) -> LateDigest:
        claimed.append(item.size)
        return of_ahead(self, item, crc, position)

    monkeypatch.setattr(LateDigests, "of_ahead", counted)
    return claimed


@pytest.mark.parametrize("checksum", ["sha256", "crc32c", "xxh3"])
@pytest.mark.parametrize("small", [True, False], ids=["with-a-small-sample", "large-only"])
def test_create_digests_large_samples_from_their_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small: bool, checksum: str
) -> None:
    sizes = [5 * MIB + 1, 100, 6 * MIB, 7 * MIB + 5] if small else [5 * MIB + 1, 6 * MIB]
    contents = _files(tmp_path / "src", sizes)
    claimed = _count_claims(monkeypatch)
    expected = {p.stem: _reference(checksum, d) for p, d in contents.items()}
    assert _create(tmp_path, contents, checksum) == expected
    assert sorted(claimed) == sorted(s for s in sizes if s > 4 * MIB)


@pytest.mark.parametrize("checksum", ["crc32c", "xxh3"])
def test_fast_digests_stay_inline_without_another_cpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, checksum: str
) -> None:
    """On one CPU the digest thread could only take turns with the copy: CRC-32C and
    XXH3 are then computed as the file is copied, not from the source ahead."""
    contents = _files(tmp_path / "src", [5 * MIB + 1, 6 * MIB])
    claimed = _count_claims(monkeypatch)
    monkeypatch.setattr(zipstream, "other_cpus", set)  # this thread's CPU only
    expected = {p.stem: _reference(checksum, d) for p, d in contents.items()}
    assert _create(tmp_path, contents, checksum) == expected
    assert claimed == []


@pytest.mark.parametrize(
    ("sizes", "peek", "events"),
    [
        ([100, 5 * MIB + 1], 64, ["helper", "header"]),
        ([5 * MIB + 1, 6 * MIB], 64, ["header"]),
        ([5 * MIB + 1, 100], 1, ["header", "helper"]),
    ],
    ids=["small-first", "large-only", "small-after-the-peek"],
)
def test_the_small_member_helper_starts_for_small_samples_only(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    sizes: list[int],
    peek: int,
    events: list[str],
) -> None:
    """Started with the write when the first samples hold a small one, at the first
    small one otherwise, and never for large samples only (they are digested ahead)."""
    contents = _files(tmp_path / "src", sizes)
    seen: list[str] = []
    start, header = zip_container.start_member_digests, ZipWriter.add_taco_header

    def started(*args: object) -> object:
        seen.append("helper")
        return start(*args)  # type: ignore[arg-type]

    def headed(self: ZipWriter) -> None:
        seen.append("header")
        header(self)

    monkeypatch.setattr(zip_container, "start_member_digests", started)
    monkeypatch.setattr(ZipWriter, "add_taco_header", headed)
    monkeypatch.setattr(zip_container, "SMALL_PEEK", peek)
    assert _create(tmp_path, contents) == {p.stem: _sha256(d) for p, d in contents.items()}
    assert seen == events


def test_a_source_gone_after_it_was_announced_fails_only_its_own_copy(
    tmp_path: Path, held: threading.Event
) -> None:
    contents = _files(tmp_path / "src", [5 * MIB, 5 * MIB + 1, 6 * MIB])
    first, gone, third = contents
    with open(tmp_path / "out.zip", "w+b") as f:
        writer = ZipWriter(f, mtime=0, late_digests=True)
        for path in contents:
            writer.expect(str(path), os.stat(path), "sha256")
        gone.unlink()  # before the digest thread opens it (it is held)
        held.set()
        infos = [writer.add_file(first.name, str(first), digest="sha256")]
        with pytest.raises(TacoIOError, match=r"f1\.bin"):
            writer.add_file(gone.name, str(gone), digest="sha256")
        infos.append(writer.add_file(third.name, str(third), digest="sha256"))
        writer.close()
    assert settle_digests([i.digest for i in infos]) == [
        _sha256(contents[first]),
        _sha256(contents[third]),
    ]
    # every source descriptor closed (the gone file's shows as "... (deleted)" if open)
    assert not {o for o in _open_files() if o.startswith(str(tmp_path / "src"))}
