"""A child forked after Arrow and DuckDB ran exits normally, whatever the import order.

Destroying an inherited DuckDB database in a forked child joins worker threads
the child does not have (see :mod:`taco_gdal.read.query._forksafe`): depending on the
process's threads it segfaults (four or more DuckDB threads: every time), hangs
(Arrow restarted its pool in the child and glibc reused a stale thread
descriptor for it) or aborts.  taco_gdal keeps every inherited database
unfreed, DuckDB's default connection included, so DuckDB can be imported at
the first query instead of with the reader.

Every case runs in its own interpreter and forks there; a hung child is killed
after ``_CHILD_TIMEOUT`` seconds and reported, so a hang fails one test, never
the suite.  ``REPRODUCER`` is the same scenario without taco_gdal: run it with
``--threads 4`` (or on a machine of four cores or more) and the child dies of
``SIGSEGV``; with ``--shelter`` it exits 0.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.datasets import write_dataset

_WAIT_FOR_CHILD = """
deadline = time.monotonic() + float(os.environ.get("CHILD_TIMEOUT", "60"))
while not (done := os.waitpid(pid, os.WNOHANG))[0]:
    if time.monotonic() > deadline:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        print("child hung")
        sys.exit(0)
    time.sleep(0.02)
print("child exit", os.waitstatus_to_exitcode(done[1]))
"""
"""The parent's side of both scripts: wait for the forked child, kill it if it hangs."""

_CHILD_TIMEOUT = 60
_SUBPROCESS_TIMEOUT = 180

REPRODUCER = (
    """
import argparse, ctypes, os, sys, time
p = argparse.ArgumentParser()
p.add_argument("--order", default="arrow-first", choices=["arrow-first", "duck-first", "no-arrow"])
p.add_argument("--threads", type=int, default=0, help="DuckDB threads (default: one per core)")
p.add_argument("--shelter", action="store_true", help="keep the default connection unfreed")
p.add_argument("--idle-child", action="store_true", help="the child starts no Arrow threads")
a = p.parse_args()
import pyarrow as pa, pyarrow.parquet as pq

def arrow_work():
    t = pa.table({f"c{i}": pa.array(range(200_000)) for i in range(4)})
    sink = pa.BufferOutputStream()  # Arrow's memory: a Python-owned buffer released by an
    pq.write_table(t, sink, row_group_size=20_000)  # Arrow thread at exit aborts (arrow#33975)
    pq.read_table(pa.BufferReader(sink.getvalue()), use_threads=True)

if a.order == "duck-first":
    import duckdb
if a.order != "no-arrow":
    arrow_work()
import duckdb  # opens DuckDB's default connection, with its worker threads
if a.threads:
    duckdb.execute(f"SET threads={a.threads}")
duckdb.sql("SELECT sum(range) FROM range(1000000)").fetchall()
if a.shelter:
    held = []
    os.register_at_fork(
        before=lambda: held.append(duckdb.default_connection()),
        after_in_parent=held.clear,
        after_in_child=lambda: [ctypes.pythonapi.Py_IncRef(ctypes.py_object(c)) for c in held],
    )
sys.stdout.flush()
pid = os.fork()
if pid == 0:
    if not a.idle_child:
        arrow_work()  # Arrow restarts its thread pool in the child (the hang needs it)
    sys.exit(0)  # a normal exit: DuckDB's module clean-up frees the default connection
"""
    + _WAIT_FOR_CHILD
)

_TACO = (
    """
import os, sys, time
order, path, threads, query = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
import pyarrow as pa, pyarrow.parquet as pq

def arrow_work():
    t = pa.table({f"c{i}": pa.array(range(200_000)) for i in range(4)})
    sink = pa.BufferOutputStream()  # Arrow's memory: a Python-owned buffer released by an
    pq.write_table(t, sink, row_group_size=20_000)  # Arrow thread at exit aborts (arrow#33975)
    pq.read_table(pa.BufferReader(sink.getvalue()), use_threads=True)

if order == "duck-first":
    import duckdb
arrow_work()
import taco_gdal
ds = taco_gdal.load(path)
assert len(ds.data) == 4
if query in ("taco", "both"):
    assert len(ds.sql("SELECT * FROM data WHERE cloud_cover < 2").data) == 2
import duckdb
if threads:  # as on a machine with this many cores
    duckdb.execute(f"SET threads={threads}")
if query in ("default", "both"):
    assert duckdb.sql("SELECT 42").fetchall() == [(42,)]
sys.stdout.flush()
pid = os.fork()
if pid == 0:
    ids = ds.filter_datetime("2023-01-02/2023-01-03").data["id"].tolist()
    assert ids == ["s001", "s002"], ids
    arrow_work()
    sys.exit(0)
"""
    + _WAIT_FOR_CHILD
)


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=_SUBPROCESS_TIMEOUT,
        check=False,
        env={**os.environ, "CHILD_TIMEOUT": str(_CHILD_TIMEOUT)},
    )


@pytest.fixture(scope="module")
def flat_zip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_dataset(tmp_path_factory.mktemp("fork_exit"), "flat", "zip", n=4)


@pytest.mark.slow  # twelve interpreters, each loading the reader
@pytest.mark.parametrize("query", ["taco", "default", "both"])
@pytest.mark.parametrize("threads", [0, 4])
@pytest.mark.parametrize("order", ["arrow-first", "duck-first"])
def test_forked_child_exits_normally(flat_zip: Path, order: str, threads: int, query: str) -> None:
    """Arrow's pool and DuckDB (taco_gdal's databases, the default one, or both) ran before fork."""
    done = _run(["-c", _TACO, order, str(flat_zip), str(threads), query])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "child exit 0", done.stdout + done.stderr


@pytest.mark.parametrize("threads", [0, 4])
@pytest.mark.parametrize("order", ["arrow-first", "duck-first", "no-arrow"])
def test_reproducer_with_the_shelter_exits_normally(
    tmp_path: Path, order: str, threads: int
) -> None:
    """The standalone reproducer, sheltered as taco_gdal does, in every order."""
    script = tmp_path / "fork_exit_repro.py"
    script.write_text(REPRODUCER)
    done = _run([str(script), "--order", order, "--threads", str(threads), "--shelter"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "child exit 0", done.stdout + done.stderr


def test_reproducer_without_the_shelter_still_fails(tmp_path: Path) -> None:
    """DuckDB 1.5.5 with four threads: the unsheltered child dies (when this fails, DuckDB fixed
    its fork clean-up and ``_forksafe`` can be reconsidered)."""
    script = tmp_path / "fork_exit_repro.py"
    script.write_text(REPRODUCER)
    done = _run([str(script), "--order", "no-arrow", "--threads", "4", "--idle-child"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() in ("child exit -11", "child exit -6", "child hung"), done.stdout


_COLD = """
import sys
import taco_gdal
ds = taco_gdal.load(sys.argv[1])
assert len(ds.data) == 4
print("after .data:", "duckdb" in sys.modules)
assert len(ds.sql("SELECT * FROM data WHERE cloud_cover < 2").data) == 2
print("after sql:", "duckdb" in sys.modules)
"""


@pytest.mark.parametrize("container", ["zip", "folder"])
def test_load_and_data_import_no_duckdb(tmp_path: Path, container: str) -> None:
    path = write_dataset(tmp_path, "flat", container, n=4)
    done = _run(["-c", _COLD, str(path)])
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["after .data: False", "after sql: True"], done.stdout
