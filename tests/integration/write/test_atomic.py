"""Atomic, no-clobber outputs: failures and kill -9 leave nothing behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from taco_gdal.errors import TacoExistsError, TacoIOError
from taco_gdal.write import create, write_folder, write_zip
from taco_gdal.write._atomic import atomic_file
from tests.integration.write._package import package_from_tree
from tests.integration.write._verify import verify_zip
from tests.support.datasets import make_taco

REPO = Path(__file__).resolve().parents[3]


def test_existing_zip_not_overwritten(tmp_path: Path) -> None:
    taco = make_taco(tmp_path, "flat")
    target = tmp_path / "a.tacozip"
    target.write_bytes(b"precious")
    with pytest.raises(TacoExistsError, match="overwrite=True"):
        create(taco, target, quiet=True)
    assert target.read_bytes() == b"precious"
    create(taco, target, overwrite=True, quiet=True)
    verify_zip(target, taco.metadata())


def test_existing_folder_not_overwritten(tmp_path: Path) -> None:
    taco = make_taco(tmp_path, "2level")
    target = tmp_path / "f"
    target.mkdir()
    (target / "keep").write_text("x")
    with pytest.raises(TacoExistsError):
        create(taco, target, quiet=True)
    assert (target / "keep").read_text() == "x"
    create(taco, target, overwrite=True, quiet=True)
    assert not (target / "keep").exists() and (target / "COLLECTION.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f", "src_2level"]


@pytest.mark.parametrize("container", ["zip", "folder"])
def test_failure_mid_write_leaves_nothing(tmp_path: Path, container: str) -> None:
    src = tmp_path / "src"
    src.mkdir()
    files = []
    for i in range(3):
        path = src / f"{i}.bin"
        path.write_bytes(bytes([i + 1]) * 1000)
        files.append(str(path))
    package = package_from_tree([(f"s{i}", p) for i, p in enumerate(files)])
    os.unlink(files[2])  # the third sample vanishes after the metadata was built
    out = tmp_path / "out"
    out.mkdir()
    writer = write_zip if container == "zip" else write_folder
    target = out / ("d.tacozip" if container == "zip" else "d")
    with pytest.raises(TacoIOError, match=r"2\.bin"):
        writer(package, target, quiet=True)
    assert list(out.iterdir()) == []


def test_atomic_file_overwrite_and_exception(tmp_path: Path) -> None:
    target = tmp_path / "t.bin"
    with atomic_file(target) as f:
        f.write(b"one")
    with pytest.raises(RuntimeError), atomic_file(target, overwrite=True) as f:
        f.write(b"two")
        raise RuntimeError("boom")
    assert target.read_bytes() == b"one"
    with atomic_file(target, overwrite=True) as f:
        f.write(b"three")
    assert target.read_bytes() == b"three"
    assert [p.name for p in tmp_path.iterdir()] == ["t.bin"]


_CHILD = """
import sys
from tests.integration.write._package import package_from_tree
from taco_gdal.write import write_zip
write_zip(package_from_tree([("big", sys.argv[1])]), sys.argv[2], quiet=True)
"""


def _temp_size(pid: int, folder: Path) -> int | None:
    """Size of the unnamed temporary the process holds open in ``folder``."""
    fd_dir = Path(f"/proc/{pid}/fd")
    try:
        fds = list(fd_dir.iterdir())
    except FileNotFoundError:
        return None
    for fd in fds:
        try:
            link = os.readlink(fd)
            if link.startswith(f"{folder}/") and link.endswith("(deleted)"):
                return os.stat(fd).st_size
        except FileNotFoundError:
            continue
    return None


@pytest.mark.slow
def test_kill_9_mid_write_leaves_nothing(tmp_path: Path) -> None:
    source = tmp_path / "big.bin"
    block = bytes(range(1, 256)) * (1024 * 1024 // 255 + 1)
    with open(source, "wb") as f:
        for _ in range(768):
            f.write(block[: 1024 * 1024])
    out = tmp_path / "out"
    out.mkdir()
    target = out / "big.tacozip"
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(source), str(target)],
        cwd=REPO,
        stderr=subprocess.PIPE,
    )
    seen = 0
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and child.poll() is None:
            seen = _temp_size(child.pid, out) or 0
            if seen > 16 * 1024 * 1024:
                child.send_signal(signal.SIGKILL)
                break
            time.sleep(0.001)
    finally:
        if child.poll() is None:
            child.kill()
        _, stderr = child.communicate()
    assert child.returncode == -signal.SIGKILL, stderr.decode()
    assert seen > 16 * 1024 * 1024
    assert list(out.iterdir()) == []
    source.unlink()


_KILLED_WHILE_SPOOLING = """
import os, signal, sys
from tests.integration.write._package import package_from_tree
from taco_gdal.write import write_zip, zip_container

real = zip_container.parquet_file

def write_then_die(*args, **kwargs):
    real(*args, **kwargs)  # the level is spooled; the process dies before copying it in
    os.kill(os.getpid(), signal.SIGKILL)

zip_container.parquet_file = write_then_die
write_zip(package_from_tree([("a", sys.argv[1])]), sys.argv[2], quiet=True)
"""


def test_kill_9_while_a_level_is_spooled_leaves_nothing(tmp_path: Path) -> None:
    # each level Parquet goes through a temporary file beside the output: it must have no
    # name there (a named .taco-level-* file stayed behind a Dask worker killed at that point)
    source = tmp_path / "a.bin"
    source.write_bytes(b"x" * 1000)
    out = tmp_path / "out"
    out.mkdir()
    child = subprocess.run(
        [sys.executable, "-c", _KILLED_WHILE_SPOOLING, str(source), str(out / "a.tacozip")],
        cwd=REPO,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()
    assert list(out.iterdir()) == []
