"""``create()`` writes with Arrow's system pool and gives the caller's default pool back
(also when it raises, and when writes nest or overlap); the bytes do not depend on it."""

from __future__ import annotations

import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pyarrow as pa
import pytest

from taco_gdal.errors import TacoExistsError
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.write import _memory, create
from taco_gdal.write._memory import writer_allocation
from taco_gdal.write.zip_container import write_zip


def _taco(folder: Path) -> Taco:
    roots = []
    for r in range(3):
        leaves = []
        for m in range(2):
            path = folder / f"f{r}{m}"
            path.write_bytes(bytes([r, m]) * 7)
            leaves.append(Sample(f"b{m}", path, cloud=float(m)))
        roots.append(Sample(f"t{r}", Tortilla(leaves), cloud=float(r)))
    return Taco(
        Tortilla(roots), id="alloc", dataset_version="1", description="d",
        licenses=["CC0-1.0"], providers=[{"name": "tests"}], tasks=["other"],
    )  # fmt: skip


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def test_create_uses_system_pool_and_restores_the_default(tmp_path: Path) -> None:
    before = pa.default_memory_pool().backend_name
    seen: list[str] = []
    taco = _taco(tmp_path)
    metadata = taco.metadata

    def spy() -> object:
        seen.append(pa.default_memory_pool().backend_name)
        return metadata()

    taco.metadata = spy  # type: ignore[method-assign]
    create(taco, tmp_path / "out.tacozip", quiet=True)
    assert seen == ["system"]
    assert pa.default_memory_pool().backend_name == before
    assert _memory._active == 0


def test_same_bytes_with_the_caller_pool(tmp_path: Path) -> None:
    taco = _taco(tmp_path)
    create(taco, tmp_path / "scoped.tacozip", quiet=True)
    # write_zip() takes no allocation scope: the process's default pool
    write_zip(taco.metadata(), tmp_path / "plain.tacozip", quiet=True)
    scoped, plain = _members(tmp_path / "scoped.tacozip"), _members(tmp_path / "plain.tacozip")
    assert scoped.keys() == plain.keys()
    assert len(scoped) == 1 + 6 + 3 + 2 + 1
    for name in scoped:
        assert scoped[name] == plain[name], name


def test_default_pool_restored_when_create_raises(tmp_path: Path) -> None:
    before = pa.default_memory_pool().backend_name
    taco = _taco(tmp_path)
    (tmp_path / "taken.tacozip").write_bytes(b"x")
    with pytest.raises(TacoExistsError):
        create(taco, tmp_path / "taken.tacozip", quiet=True)
    assert pa.default_memory_pool().backend_name == before
    assert _memory._active == 0


def test_nested_and_overlapping_scopes_restore_once() -> None:
    before = pa.default_memory_pool().backend_name
    inside = threading.Event()
    leave = threading.Event()
    seen: list[str] = []

    def other() -> None:
        with writer_allocation():
            inside.set()
            leave.wait(10)
            seen.append(pa.default_memory_pool().backend_name)

    with writer_allocation():
        with writer_allocation():
            assert pa.default_memory_pool().backend_name == "system"
        assert pa.default_memory_pool().backend_name == "system"
        thread = threading.Thread(target=other)
        thread.start()
        assert inside.wait(10)
    # the other write is still running: its pool stays until it leaves
    assert pa.default_memory_pool().backend_name == "system"
    leave.set()
    thread.join(10)
    assert seen == ["system"]
    assert pa.default_memory_pool().backend_name == before
    assert _memory._active == 0


_PROBE = """
import ctypes

from taco_gdal.write import _memory
from taco_gdal.write._memory import writer_allocation


class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd",
        "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]


libc = ctypes.CDLL(None)
libc.mallinfo2.restype = MallInfo2
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]


def mapped(size):
    # after a trim, so that the heap's free top does not serve the block
    libc.malloc_trim(0)
    before = libc.mallinfo2().hblks
    block = libc.malloc(size)
    try:
        return libc.mallinfo2().hblks - before == 1
    finally:
        libc.free(block)


size = 8 * 1024 * 1024  # a zstd context's order of size
with writer_allocation():
    during = mapped(size)
print(during, mapped(size), mapped(_memory.AFTER_MMAP_THRESHOLD + 1024 * 1024))
"""


def test_large_blocks_are_mapped_during_a_write_and_not_after() -> None:
    # a fresh process: in a long one, a free chunk of the heap may serve the block
    probe = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    during, after, huge_after = probe.stdout.split()
    assert during == "True"  # threshold 512 KiB: mapped, unmapped when freed
    assert after == "False"  # afterwards 32 MiB: the block comes from the heap
    assert huge_after == "True"


_SMALL_FILES = """
import resource
import sys
from pathlib import Path

from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.write import create

sources = sorted(Path(sys.argv[1]).glob("s*.bin"))
taco = Taco(
    Tortilla([Sample(p.stem, p) for p in sources]), id="faults", dataset_version="1",
    description="d", licenses=["CC0-1.0"], providers=[{"name": "tests"}], tasks=["other"],
)
create(taco, sys.argv[2], split_size=None, quiet=True)  # warm: imports, first allocations
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
create(taco, sys.argv[2], split_size=None, quiet=True, overwrite=True, checksum=sys.argv[3] or None)
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.parametrize("checksum", [None, "crc32c"])
def test_small_files_read_whole_reuse_heap_blocks_instead_of_mapping_each(
    tmp_path: Path, checksum: str | None
) -> None:
    # a file of 200 KiB is read whole (under zipstream.LOCAL_BLOCK); mapped on its own it
    # is 50 pages faulted in: 15.9k faults for these 300 files, against about 2.1k once the
    # files reuse heap blocks (and 0.65k for as many files of 4 KiB)
    files = 300
    block = bytes(range(256)) * (200 * 4)
    for i in range(files):
        (tmp_path / f"s{i:04d}.bin").write_bytes(i.to_bytes(4, "little") + block[4:])
    probe = subprocess.run(
        [sys.executable, "-c", _SMALL_FILES, str(tmp_path), str(tmp_path / "out.tacozip"),
         checksum or ""],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    faults = int(probe.stdout.split()[-1])
    assert faults < 15 * files, f"{faults} page faults writing {files} files of 200 KiB"
