"""Regression tests for what the long fuzz runs (scripts/fuzz.py) found, one test per finding."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.compute
import pyarrow.parquet as pq
import pytest

import taco_gdal
from taco_gdal.errors import TacoFormatError
from taco_gdal.format.names import CURRENT_ID, ID, OFFSET, RELATIVE_PATH, TYPE
from taco_gdal.read.opening.containers._parse import column_groups, parse_level
from tests.fuzz._harness import Target, run_mutation
from tests.support.datasets import write_dataset
from tests.support.forking import in_forked_child

FINDINGS = Path(__file__).parent / "findings"
"""Files the long fuzz runs made, kept as they were found."""


def _parquet(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return bytes(sink.getvalue().to_pybytes())


@pytest.mark.parametrize(
    ("column", "values"),
    [
        (ID, pa.array([b"a", b"b"], pa.binary())),
        (TYPE, pa.array([1, 2], pa.int64())),
        (CURRENT_ID, pa.array(["0", "1"])),
        (OFFSET, pa.array([1.5, 2.5])),
        (RELATIVE_PATH, pa.array([b"a", b"b"], pa.binary())),
    ],
)
def test_spec_column_of_the_wrong_type_is_refused(column: str, values: pa.Array) -> None:
    # Found by the parquet fuzzer (seed 2026): a flipped logical-type byte made ``id``
    # a BLOB, and building the views failed with DuckDB's BinderException.
    columns = {ID: pa.array(["a", "b"]), TYPE: pa.array(["FILE", "FILE"]), column: values}
    with pytest.raises(TacoFormatError, match=f"column '{column}' must hold"):
        parse_level(_parquet(pa.table(columns)), "level0.parquet")


def test_text_columns_may_be_large_strings_and_internal_columns_null() -> None:
    table = pa.table(
        {
            ID: pa.array(["a"], pa.large_string()),
            TYPE: pa.array(["FILE"]),
            RELATIVE_PATH: pa.nulls(1),
        }
    )
    assert parse_level(_parquet(table), "level0.parquet").num_rows == 1


def test_binary_id_in_a_folder_dataset_fails_load_with_a_taco_error(tmp_path: Path) -> None:
    root = write_dataset(tmp_path, "flat", "folder", n=2)
    level0 = root / "METADATA" / "level0.parquet"
    table = pq.read_table(level0)
    position = table.column_names.index(ID)
    pq.write_table(table.set_column(position, ID, table.column(ID).cast(pa.binary())), level0)
    with pytest.raises(TacoFormatError, match="column 'id' must hold text, found binary"):
        taco_gdal.load(root)


# Found by the parquet fuzzer (seed 2201, case 370, 2026-11-29): one byte of
# level0.parquet's footer made a column chunk's definition-level histogram two
# entries long for a column with one level.  pyarrow 26 builds that chunk's metadata
# in ``RowGroupMetaData.column`` without turning the C++ exception into a Python one,
# and ``load()`` (sizing its column groups) ended the process with std::terminate.
# Each call runs in a forked child, so that without the fix the test fails instead of
# the test session dying.


def _outcome(call: Callable[[], object]) -> str:
    def report() -> str:
        try:
            call()
        except TacoFormatError as exc:
            return f"TacoFormatError: {exc}"
        except OSError as exc:
            return f"OSError: {exc}"
        return "no error"

    return in_forked_child(report) or "the process died"


def test_a_level_with_bad_size_statistics_is_refused_not_an_abort() -> None:
    data = (FINDINGS / "definition_level_histogram.parquet").read_bytes()
    outcome = _outcome(lambda: parse_level(data, "level0.parquet"))
    assert outcome.startswith("TacoFormatError: level0.parquet: expected a parquet file")
    assert "Definition level histogram size mismatch" in outcome


def test_loading_it_is_refused_and_other_datasets_still_load(tmp_path: Path) -> None:
    bad = FINDINGS / "definition_level_histogram.tacozip"
    good = write_dataset(tmp_path, "flat", "zip", n=4)

    def load_both() -> object:
        try:
            taco_gdal.load(bad)
        except TacoFormatError as exc:
            ids = taco_gdal.load(good).data["id"].tolist()
            raise TacoFormatError(f"{exc}; then the other dataset loaded {ids}") from exc
        return None

    outcome = _outcome(load_both)
    assert outcome.startswith("TacoFormatError: ")
    assert "definition_level_histogram.tacozip" in outcome
    assert "METADATA/level0.parquet" in outcome
    assert "then the other dataset loaded ['s000', 's001', 's002', 's003']" in outcome


def test_grouping_a_large_level_with_bad_size_statistics_raises() -> None:
    """Above the group budget the chunks' sizes are read: they are checked first."""
    data = (FINDINGS / "definition_level_histogram.parquet").read_bytes()
    outcome = _outcome(lambda: column_groups(pq.ParquetFile(pa.BufferReader(data)), budget=1))
    assert outcome.startswith("OSError: ")
    assert "Definition level histogram size mismatch" in outcome


def test_column_groups_of_valid_levels() -> None:
    table = pa.table({"a": list(range(1000)), "b": ["x" * 100] * 1000, "c": [1.5] * 1000})
    parquet = pq.ParquetFile(pa.BufferReader(_parquet(table)))
    assert column_groups(parquet) == [["a", "b", "c"]]
    assert column_groups(parquet, columns=["c"]) == [["c"]]
    assert column_groups(parquet, budget=1) == [["a"], ["b"], ["c"]]


# Found by the TACOCAT fuzzer (seed 2204, 2026-11-29): one byte of the Arrow schema a
# level Parquet carries made a metadata column ``string_view``; pyarrow 26 has no
# ``take`` kernel for views, and the check of the TACOCAT's source files raised
# ArrowNotImplementedError from ``load()``.


def test_view_columns_are_read_as_large_strings() -> None:
    table = pa.table(
        {
            ID: pa.array(["a", "b"]),
            TYPE: pa.array(["FILE", "FILE"]),
            "note": pa.array(["x", "y"], pa.string_view()),
            "raw": pa.array([b"1", b"2"], pa.binary_view()),
        }
    )
    level = parse_level(_parquet(table), "level0.parquet")
    assert level.schema.field("note").type == pa.large_string()
    assert level.schema.field("raw").type == pa.large_binary()
    kept = level.filter(pa.compute.equal(level.column("note"), "y"))
    assert kept.column(ID).to_pylist() == ["b"]


def test_the_tacocat_mutation_that_made_a_view_column(targets: dict[str, Target]) -> None:
    outcome = run_mutation(targets["tacocat"], [(650640, 89)], None)
    assert outcome in {"refused", "loaded, verify caught", "loaded, verified, bytes right"}
