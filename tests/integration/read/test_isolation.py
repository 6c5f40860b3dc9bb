"""Datasets as values: pickling, threads, a poisoned dataset, and sql() without external access.

* a filtered dataset (sql, datetime and bbox below level 0) and its frames pickle
  into equal objects, and a spawned process reads them without the container
  (the container is deleted first);
* one dataset used from 8 threads gives the rows and bytes of a sequential run;
* a dataset whose query kills DuckDB's database ("FATAL Error: database has
  been invalidated") raises TacoQueryError naming it, and datasets loaded
  before and after it keep loading, filtering and reading;
* ``sql()`` cannot read files or URLs (``read_text``, ``read_parquet``), nor run
  ``LOAD``/``ATTACH``/``COPY``/``INSTALL``, unless the dataset opted in.
"""

from __future__ import annotations

import multiprocessing
import pickle
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import rasterio

import taco_gdal
from taco_gdal import TacoDataFrame, TacoError, TacoQueryError
from taco_gdal.format.names import GDAL_VSI
from taco_gdal.read import TacoDataset
from taco_gdal.read.frames.dataframe import TacoGeoDataFrame
from taco_gdal.read.query import _duck
from tests.support.datasets import write_dataset


def _filtered(path: Path | str) -> TacoDataset:
    return (
        taco_gdal.load(path)
        .sql("SELECT * FROM data WHERE id <> 'tile001' ORDER BY id DESC")
        .filter_datetime("2023-01-01/2023-01-12", level=1)
        .filter_bbox(-3.70, 40.0, -3.35, 41.0, level=1)
    )


def _rows(ds: TacoDataset) -> dict[str, Any]:
    children = ds.read(0)
    assert isinstance(children, TacoDataFrame)
    return {
        "levels": [ds.to_arrow(k) for k in range(ds.max_depth + 1)],
        "children": children[["id", GDAL_VSI]].to_dict("list"),
        "repr": repr(ds),
    }


def _same(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert a["repr"] == b["repr"]
    assert a["children"] == b["children"]
    for mine, theirs in zip(a["levels"], b["levels"], strict=True):
        assert mine.equals(theirs)


# --- pickling -------------------------------------------------------------------


def test_filtered_dataset_pickles_into_an_equal_dataset(tmp_path: Path) -> None:
    ds = _filtered(write_dataset(tmp_path, "2level", "folder", n=6))
    expected = _rows(ds)
    clone = pickle.loads(pickle.dumps(ds))
    assert clone.state.steps == ds.state.steps
    assert clone.state.collection == ds.state.collection
    _same(_rows(clone), expected)
    assert len(expected["children"]["id"]) == 1  # tile002 keeps only b02 (bbox at level 1)
    assert len(pickle.dumps(ds)) < 2 * ds.metadata_nbytes + 100_000  # the tables, not more


def test_frames_pickle_and_still_navigate(tmp_path: Path) -> None:
    ds = _filtered(write_dataset(tmp_path, "2level", "zip", n=6))
    frame = ds.data
    small = frame[["id", "type", GDAL_VSI]]  # the index keeps internal:current_id
    for original in (frame, small):
        clone = pickle.loads(pickle.dumps(original))
        assert type(clone) is type(original)
        assert clone["id"].tolist() == original["id"].tolist()
        children = clone.read(0)
        assert isinstance(children, TacoDataFrame)
        assert isinstance(children, TacoGeoDataFrame)  # level 1 carries stac:centroid
        assert children["id"].tolist() == ["b02"]
        leaf = pickle.loads(pickle.dumps(children)).read("b02")
        assert isinstance(leaf, str)
        with rasterio.open(leaf) as src:
            assert src.read().shape == (1, 16, 16)


def _in_spawned_child(payload: bytes) -> bytes:
    ds, frame = pickle.loads(payload)
    rows = _rows(ds)
    children = frame.read(0)
    rows["frame_children"] = children["id"].tolist()
    return pickle.dumps(rows)


def test_spawned_process_needs_no_container_metadata(tmp_path: Path) -> None:
    folder = write_dataset(tmp_path, "2level", "folder", n=6)
    ds = _filtered(folder)
    expected = _rows(ds)
    payload = pickle.dumps((ds, ds.data))
    # the child may read sample files (a FOLDER's __meta__) but no container metadata
    shutil.rmtree(folder / "METADATA")
    (folder / "COLLECTION.json").unlink()
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        rows = pickle.loads(pool.apply_async(_in_spawned_child, (payload,)).get(timeout=120))
    assert rows.pop("frame_children") == expected["children"]["id"]
    _same(rows, expected)
    with pytest.raises(TacoError):
        taco_gdal.load(folder)  # really gone


# --- threads --------------------------------------------------------------------


def _work(ds: TacoDataset, seed: int) -> list[Any]:
    """Queries and reads a thread does; deterministic per seed."""
    out: list[Any] = []
    view = ds.filter_datetime("2023-01-01/2023-01-20", level=1)
    if seed % 2:
        view = view.sql("SELECT * FROM data WHERE split <> 'test'")
    out.append(view.to_arrow(1).column("id").to_pylist())
    frame = view.data
    for position in range(len(frame)):
        children = frame.read(position)
        assert isinstance(children, TacoDataFrame)
        for path in children[GDAL_VSI]:
            with taco_gdal.open_sample(path) as src:
                out.append(src.read().tobytes())
    return out


def test_one_dataset_from_eight_threads(tmp_path: Path) -> None:
    ds = taco_gdal.load(write_dataset(tmp_path, "2level", "zip", n=6))
    seeds = list(range(32))
    sequential = [_work(ds, seed) for seed in seeds]
    with ThreadPoolExecutor(8) as pool:
        threaded = list(pool.map(lambda seed: _work(ds, seed), seeds))
    assert threaded == sequential
    assert all(len(result) > 1 for result in sequential)


# --- fork ---------------------------------------------------------------------------

_inherited: dict[str, TacoDataset] = {}


def _ids_in_child(_: object = None) -> list[str]:
    ds = _inherited["ds"]
    return ds.filter_datetime("2023-01-02/2023-01-03").data["id"].tolist()


def test_fork_while_another_thread_queries(tmp_path: Path) -> None:
    """The parent forks while a thread runs a query on the same dataset.

    The child must not touch the parent's DuckDB connection (its lock is held by
    a thread that does not exist in the child): it builds its own database.
    """
    ds = taco_gdal.load(write_dataset(tmp_path, "flat", "zip", n=4))
    _inherited["ds"] = ds
    expected = ds.filter_datetime("2023-01-02/2023-01-03").data["id"].tolist()
    assert expected == ["s001", "s002"]
    slow = ds.sql(
        "SELECT count(*) AS n FROM data, range(3000000000) AS r WHERE hash(r.range) % 7 = 0"
    )
    failures: list[BaseException] = []
    running = threading.Event()

    def run_slow() -> None:
        running.set()
        try:
            _ = slow.data
        except TacoQueryError as exc:  # interrupted below
            failures.append(exc)

    thread = threading.Thread(target=run_slow)
    thread.start()
    running.wait()
    time.sleep(0.5)  # the query is running and holds the dataset's session
    try:
        with multiprocessing.get_context("fork").Pool(2) as pool:
            results = pool.map_async(_ids_in_child, range(2)).get(timeout=60)
    finally:
        _duck.interrupt(ds.state.base)
        thread.join(timeout=60)
    assert results == [expected, expected]
    assert not thread.is_alive()
    assert len(failures) == 1 and "nterrupt" in str(failures[0])


_FORK_AND_EXIT = """
import os, sys, time
import taco_gdal
ds = taco_gdal.load(sys.argv[1])
assert len(ds.sql("SELECT * FROM data WHERE cloud_cover < 2").data) == 2
pid = os.fork()
if pid == 0:
    ids = ds.filter_datetime("2023-01-02/2023-01-03").data["id"].tolist()
    assert ids == ["s001", "s002"], ids
    sys.exit(0)  # a normal interpreter exit, not multiprocessing's os._exit
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        print("exit status", os.waitstatus_to_exitcode(status))
        break
    time.sleep(0.05)
else:
    os.kill(pid, 9)
    print("child hung")
"""


def test_plain_fork_child_exits_normally(tmp_path: Path) -> None:
    """The parent's DuckDB objects are never freed in the child (that waits forever)."""
    path = write_dataset(tmp_path, "flat", "zip", n=4)
    done = subprocess.run(
        [sys.executable, "-c", _FORK_AND_EXIT, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.stdout.strip() == "exit status 0", done.stdout + done.stderr


# --- a dataset that kills DuckDB ----------------------------------------------------


def _poisoned(tmp_path: Path) -> Path:
    """A FOLDER dataset whose second row has an empty WKB ``stac:centroid``."""
    folder = write_dataset(tmp_path / "poison", "flat", "folder", n=4)
    level0 = folder / "METADATA" / "level0.parquet"
    table = pq.read_table(level0)
    values = table.column("stac:centroid").to_pylist()
    values[1] = b""
    index = table.column_names.index("stac:centroid")
    pq.write_table(table.set_column(index, "stac:centroid", pa.array(values, pa.binary())), level0)
    return folder


_KILLER = (
    'SELECT * FROM data WHERE ST_Intersects(ST_GeomFromWKB("stac:centroid"), '
    "ST_MakeEnvelope(-10, 30, 10, 50))"
)


def _still_works(ds: TacoDataset, count: int) -> None:
    assert len(ds.data) == count
    assert len(ds.filter_datetime("2023-01-01/2023-01-02").data) == 2
    assert len(ds.sql("SELECT * FROM data WHERE cloud_cover >= 1").data) == count - 1
    assert len(ds.filter_bbox(-3.8, 40.0, -3.5, 41.0).data) > 0
    path = ds.data.read(0)
    assert isinstance(path, str)
    with rasterio.open(path) as src:
        assert src.read().shape == (1, 16, 16)


def test_poisoned_dataset_fails_alone(tmp_path: Path) -> None:
    before = taco_gdal.load(write_dataset(tmp_path / "a", "flat", "zip", n=4))
    _still_works(before, 4)
    poisoned_path = _poisoned(tmp_path)
    poisoned = taco_gdal.load(poisoned_path)
    with pytest.raises(TacoQueryError) as caught:
        _ = poisoned.sql(_KILLER).data
    assert str(poisoned_path) in str(caught.value)
    assert "Stack Trace" not in str(caught.value)
    with pytest.raises(TacoError):  # the filter's path: whatever fails, it is a TacoError
        _ = poisoned.filter_bbox(-10, 30, 10, 50).data
    _still_works(before, 4)
    after = taco_gdal.load(write_dataset(tmp_path / "b", "flat", "folder", n=3))
    _still_works(after, 3)
    _still_works(before, 4)
    assert len(poisoned.sql("SELECT id FROM data").data) == 4  # its other queries still run


def test_killed_database_is_replaced(tmp_path: Path) -> None:
    ds = taco_gdal.load(write_dataset(tmp_path, "flat", "zip", n=3))
    first = _duck.database(spatial=True)  # the kind the query below runs in
    with pytest.raises(TacoQueryError):
        _ = taco_gdal.load(_poisoned(tmp_path)).sql(_KILLER).data
    assert not first.alive
    assert _duck.database() is not first
    assert len(ds.data) == 3


# --- external access ----------------------------------------------------------------


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file outside the dataset, and a parquet one."""
    (tmp_path / "secret.txt").write_text("secret")
    pq.write_table(pa.table({"secret": [1, 2]}), tmp_path / "secret.parquet")
    return tmp_path


def _readers(folder: Path) -> dict[str, str]:
    return {
        "read_text": f"SELECT content FROM read_text('{folder / 'secret.txt'}')",
        "read_parquet": f"SELECT secret FROM read_parquet('{folder / 'secret.parquet'}')",
        "read_csv": f"SELECT * FROM read_csv('{folder / 'secret.txt'}')",
        "glob": f"SELECT * FROM glob('{folder}/*')",
    }


_STATEMENTS = {
    "LOAD": "LOAD 'httpfs'",
    "INSTALL": "INSTALL httpfs",
    "ATTACH": "ATTACH '{folder}/x.duckdb'",
    "COPY TO": "COPY (SELECT 1) TO '{folder}/out.csv'",
    "two statements": "SELECT 1; COPY (SELECT 1) TO '{folder}/out.csv'",
    "escape the view": "SELECT 1) AS x; ATTACH '{folder}/x.duckdb'; SELECT * FROM (SELECT 1",
    "SET": "SET enable_external_access = true",
}


@pytest.mark.parametrize("reader", sorted(_readers(Path("/"))))
def test_sql_cannot_read_files(tmp_path: Path, outside: Path, reader: str) -> None:
    ds = taco_gdal.load(write_dataset(tmp_path, "flat", "zip", n=3))
    with pytest.raises(TacoQueryError, match=r"disabled by configuration|External access"):
        _ = ds.sql(_readers(outside)[reader]).data


@pytest.mark.parametrize("name", sorted(_STATEMENTS))
def test_sql_refuses_statements(tmp_path: Path, outside: Path, name: str) -> None:
    ds = taco_gdal.load(write_dataset(tmp_path, "flat", "zip", n=3))
    for dataset in (ds, ds.with_sql_external_access()):
        with pytest.raises(TacoQueryError, match=r"query statement|cannot parse"):
            dataset.sql(_STATEMENTS[name].format(folder=outside))
    assert not (outside / "out.csv").exists()
    assert not (outside / "x.duckdb").exists()


def test_database_refuses_what_reaches_it(tmp_path: Path, outside: Path) -> None:
    """Even a statement that got past sql() would be refused by the database itself."""
    ds = taco_gdal.load(write_dataset(tmp_path, "flat", "zip", n=3))
    base = ds.state.base
    for sql in (
        f"COPY (SELECT 1) TO '{outside}/out.csv'",
        f"ATTACH '{outside}/x.duckdb'",
        "INSTALL httpfs",
        f"LOAD '{outside}/secret.txt'",
        "SET enable_external_access = true",
        "SET python_enable_replacements = true",
    ):
        with pytest.raises(TacoQueryError):
            _duck.run(base, (), lambda s, sql=sql: s.conn.execute(sql), what="test")
    assert not (outside / "out.csv").exists()
    opened = ds.with_sql_external_access().state.base
    _duck.run(
        opened, (), lambda s: s.conn.execute(f"COPY (SELECT 1) TO '{outside}/out.csv'"), what="test"
    )
    assert (outside / "out.csv").exists()


def test_opt_in_reads_files(tmp_path: Path, outside: Path) -> None:
    ds = taco_gdal.load(write_dataset(tmp_path, "flat", "zip", n=3))
    opened = ds.with_sql_external_access()
    assert opened.with_sql_external_access() is opened
    text = opened.sql(_readers(outside)["read_text"]).data
    assert text["content"].tolist() == ["secret"]
    secret = opened.sql(
        f"SELECT d.id, s.secret FROM data AS d POSITIONAL JOIN "
        f"read_parquet('{outside / 'secret.parquet'}') AS s"
    ).data
    assert secret["secret"].tolist()[:2] == [1, 2]
    assert secret["secret"].isna().tolist() == [False, False, True]
    both = taco_gdal.concat([opened, opened])
    assert len(both.sql(_readers(outside)["read_parquet"]).data) == 2
    with pytest.raises(TacoQueryError):
        _ = taco_gdal.concat([opened, ds]).sql(_readers(outside)["read_parquet"]).data
    path = write_dataset(tmp_path / "loaded", "flat", "zip", n=2)
    through_load = taco_gdal.load(path, sql_external_access=True)
    assert len(through_load.sql(_readers(outside)["read_parquet"]).data) == 2
    listed = taco_gdal.load([path, path], sql_external_access=True)
    assert len(listed.sql(_readers(outside)["read_parquet"]).data) == 2
    # the locked dataset is unaffected by its sibling's opt-in
    with pytest.raises(TacoQueryError):
        _ = ds.sql(_readers(outside)["read_text"]).data


def test_sql_still_reaches_levels_and_spatial(tmp_path: Path) -> None:
    ds = taco_gdal.load(write_dataset(tmp_path, "2level", "zip", n=3))
    joined = ds.sql(
        'SELECT d.id, count(*) AS n FROM data AS d JOIN level1 AS c ON c."internal:parent_id" '
        '= d."internal:current_id" GROUP BY d.id ORDER BY d.id'
    ).data
    assert joined["n"].tolist() == [3, 3, 3]
    areas = ds.sql('SELECT id FROM level1 WHERE ST_X(ST_GeomFromWKB("stac:centroid")) < -3.6').data
    assert len(areas) > 0
    assert np.all(areas["id"].isin(["b02", "b03", "b04"]))
