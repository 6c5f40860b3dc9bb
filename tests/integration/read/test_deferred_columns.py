"""Binary columns of a large local level stay in the file until asked for.

The threshold (``_parse.STREAM_BYTES``, 32 MiB) is lowered to one byte so the
small real datasets these tests write take the large-level path; each result
is compared with the same dataset loaded the ordinary way.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import taco_gdal
from taco_gdal.errors import TacoChangedError
from taco_gdal.read.opening.containers import _parse
from tests.support.datasets import write_dataset

WKB = "stac:centroid"


@pytest.fixture
def deferring(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_parse, "STREAM_BYTES", 1)


def _both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    whole = taco_gdal.load(path)
    monkeypatch.setattr(_parse, "STREAM_BYTES", 1)
    lazy = taco_gdal.load(path)
    return whole, lazy


@pytest.mark.parametrize("container", ["zip", "folder", "tacocat"])
@pytest.mark.parametrize("shape", ["flat", "3level"])
def test_frame_equals_the_frame_of_a_whole_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shape: str, container: str
) -> None:
    path = write_dataset(tmp_path, shape, container)  # type: ignore[arg-type]
    whole, lazy = _both(path, monkeypatch)
    base = lazy.state.base  # type: ignore[attr-defined]
    holding = [k for k in range(base.depth) if WKB in base.schema(k).names]
    assert holding and all(base.pending(k) == (WKB,) for k in holding)
    assert all(whole.state.base.pending(k) == () for k in holding)  # type: ignore[attr-defined]
    expected, frame = whole.data, lazy.data  # type: ignore[attr-defined]
    assert all(base.pending(k) == (WKB,) for k in holding)  # .data decoded nothing
    assert list(frame.columns) == list(expected.columns)
    pd.testing.assert_frame_equal(pd.DataFrame(frame), pd.DataFrame(expected))
    if "geometry" in expected.columns:
        assert frame.head(2).geometry.equals(expected.head(2).geometry)
    assert lazy.to_arrow().equals(whole.to_arrow())  # type: ignore[attr-defined]
    if shape != "flat":  # navigation: the children frame of the first row, with its WKB
        children, wanted = frame.read(0), expected.read(0)
        pd.testing.assert_frame_equal(pd.DataFrame(children), pd.DataFrame(wanted))
        assert children[WKB].iloc[0] == wanted[WKB].iloc[0] and len(children[WKB].iloc[0]) == 21
    else:
        assert frame[WKB].dtype == expected[WKB].dtype
        assert frame[WKB].iloc[1] == expected[WKB].iloc[1]


def test_filters_and_sql_see_the_deferred_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_dataset(tmp_path, "flat", "zip", n=8)
    whole, lazy = _both(path, monkeypatch)
    for ds in (whole, lazy):
        frame = ds.data  # type: ignore[attr-defined]
        bounds = frame.geometry.iloc[2].bounds
        box = (bounds[0] - 1e-6, bounds[1] - 1e-6, bounds[2] + 1e-6, bounds[3] + 1e-6)
        assert ds.filter_bbox(*box).data.index.tolist() == [2]  # type: ignore[attr-defined]
        both = ds.filter_bbox(*box).filter_datetime("2000-01-01/2100-01-01")  # type: ignore[attr-defined]
        assert both.data.index.tolist() == [2]
    # decided in numpy, intersected in memory: the level never went to DuckDB whole
    assert lazy.state.base.pending(0) == (WKB,)  # type: ignore[attr-defined]
    query = f'SELECT id, octet_length("{WKB}") AS n FROM data ORDER BY id'
    got = lazy.sql(query).to_arrow()  # type: ignore[attr-defined]
    assert got.equals(whole.sql(query).to_arrow())  # type: ignore[attr-defined]
    assert lazy.state.base.pending(0) == ()  # DuckDB needed the whole level  # type: ignore[attr-defined]


def test_a_changed_file_is_refused_when_the_columns_are_read(
    tmp_path: Path, deferring: None
) -> None:
    path = write_dataset(tmp_path, "flat", "zip")
    ds = taco_gdal.load(path)
    frame = ds.data
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # rewritten in place
    with pytest.raises(TacoChangedError, match="changed since it was loaded"):
        frame[WKB].tolist()
    assert taco_gdal.load(path).data[WKB].iloc[0] is not None  # loaded again: fine


def test_pickled_dataset_reads_its_deferred_columns_in_another_process_state(
    tmp_path: Path, deferring: None
) -> None:
    path = write_dataset(tmp_path, "flat", "zip")
    ds = taco_gdal.load(path)
    copy = pickle.loads(pickle.dumps(ds))
    assert copy.state.base.pending(0) == (WKB,)
    assert copy.data[WKB].tolist() == ds.data[WKB].tolist()


def test_a_few_rows_decode_only_their_footprint_column(tmp_path: Path, deferring: None) -> None:
    path = write_dataset(tmp_path, "flat", "zip", n=6)
    ds = taco_gdal.load(path)
    base = ds.state.base
    before = base.nbytes
    head = ds.data.head(2)
    assert len(head.geometry) == 2 and head.geometry.notna().all()
    held = base.nbytes - before
    assert held == base.column(0, WKB).nbytes  # the one column, not the level again
    assert base.pending(0) == (WKB,)


def test_a_corrupt_deferred_column_is_a_format_error(tmp_path: Path, deferring: None) -> None:
    from taco_gdal.errors import TacoFormatError

    path = write_dataset(tmp_path, "flat", "zip")
    ds = taco_gdal.load(path)
    deferred = ds.state.base.loaded_levels._deferred[0]
    assert deferred is not None
    data = bytearray(path.read_bytes())
    start = deferred.offset + 4
    data[start : start + deferred.length - 12] = bytes(deferred.length - 12)
    stat = path.stat()
    path.write_bytes(bytes(data))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size and mtime: undetected
    with pytest.raises(TacoFormatError, match="cannot decode them"):
        ds.data[WKB].tolist()


def test_lazy_binary_column_behaves_like_an_arrow_column(tmp_path: Path, deferring: None) -> None:
    path = write_dataset(tmp_path, "flat", "zip", n=5)
    frame = taco_gdal.load(path).data
    column = frame[WKB]
    assert isinstance(column.dtype, pd.ArrowDtype) and column.dtype.pyarrow_dtype == pa.binary()
    assert len(column) == 5 and column.array.nbytes == 0  # nothing computed yet
    picked = column.iloc[[4, 0]].tolist()
    assert picked == [column.tolist()[4], column.tolist()[0]]
    mask = np.array([True, False, True, False, False])
    assert column[mask].tolist() == [picked[1], column.tolist()[2]]
    assert pickle.loads(pickle.dumps(column)).tolist() == column.tolist()


def test_a_few_rows_are_read_from_their_row_groups_only(tmp_path: Path, deferring: None) -> None:
    from taco_gdal.write import create
    from tests.support.datasets import make_taco

    path = create(
        make_taco(tmp_path, "flat", n=12), tmp_path / "g.tacozip", quiet=True, row_group_size=2
    )[0]
    ds = taco_gdal.load(path)
    base = ds.state.base
    assert base.loaded_levels._deferred[0].group_rows == (2,) * 6
    before = base.nbytes
    frame = ds.data
    head = frame.head(2)  # rows 0-1: row group 0 of 6
    assert head.geometry.notna().all() and head[WKB].notna().all()
    assert base.nbytes == before  # nothing kept: the row group was read and dropped
    picked = frame[WKB].iloc[[11, 0, 5]].tolist()  # 3 of 6 groups: the whole column
    whole = base.column(0, WKB).to_pylist()  # now the whole column
    assert picked == [whole[11], whole[0], whole[5]]
    assert head[WKB].tolist() == whole[:2]
    assert frame[WKB].iloc[[1, 3, 5, 7, 9]].tolist() == whole[1:10:2]  # all groups: the column
