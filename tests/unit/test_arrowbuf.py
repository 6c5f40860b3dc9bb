"""Bytes handed to Arrow's threaded Parquet readers live in Arrow's pool, not in Python."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq

from taco_gdal.io.arrowbuf import owned, owned_reader


def test_owned_is_a_copy_in_arrows_pool() -> None:
    source = bytearray(b"x" * 1_000_000)
    before = pa.total_allocated_bytes()
    copy = owned(source)
    assert pa.total_allocated_bytes() - before >= len(source)  # Arrow's memory, not Python's
    source[:3] = b"abc"
    assert copy.to_pybytes()[:3] == b"xxx"  # no view of the Python object
    assert copy.size == len(source)


def test_owned_reader_reads_parquet_like_the_bytes_do() -> None:
    sink = io.BytesIO()
    pq.write_table(pa.table({"id": ["a", "b"], "n": [1, 2]}), sink, row_group_size=1)
    data = sink.getvalue()
    assert pq.ParquetFile(owned_reader(data)).read().equals(pq.read_table(pa.BufferReader(data)))
    sliced = pa.py_buffer(b"pad" + data).slice(3)
    assert pq.ParquetFile(owned_reader(sliced)).read().num_rows == 2
