"""The writer's pandas-free column builders give what ``pa.array`` gives."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from taco_gdal.model._arrow import (
    column_from_values,
    flags,
    from_numpy,
    int64_values,
    string_scalar,
)

CASES: list[tuple[list[Any], pa.DataType]] = [
    ([1.5, -0.0, math.inf, math.nan, 2.0], pa.float64()),
    ([1.5, None, 3.25, None], pa.float64()),
    ([None, None], pa.float64()),
    ([1, -(2**63), 2**63 - 1, 0], pa.int64()),
    ([1, None, 3], pa.int64()),
    ([1, 2.5], pa.float64()),  # an int in a double column: pa.array's conversion
    ([True, False, None], pa.bool_()),
    (["a", None, "ñ", ""], pa.string()),
    ([None, None, None], pa.null()),
    ([np.float64(1.5), 2.0], pa.float64()),
]


@pytest.mark.parametrize(("values", "data_type"), CASES)
def test_column_from_values_equals_pa_array(values: list[Any], data_type: pa.DataType) -> None:
    built = column_from_values(values, data_type)
    expected = pa.array(values, type=data_type)
    assert built.type == expected.type
    assert built.null_count == expected.null_count
    assert built.equals(expected) or (  # NaN != NaN in equals(): compare the bits
        np.array_equal(
            built.to_numpy(zero_copy_only=False),
            expected.to_numpy(zero_copy_only=False),
            equal_nan=True,
        )
    )


def test_ints_past_int64_raise_as_pa_array_does() -> None:
    with pytest.raises(OverflowError):
        pa.array([2**63], pa.int64())
    with pytest.raises(OverflowError):
        column_from_values([2**63], pa.int64())


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint64", "float64", "float32", "bool"])
def test_from_numpy_round_trips(dtype: str) -> None:
    values = (np.arange(10) % 3 == 0) if dtype == "bool" else np.arange(10).astype(dtype)
    array = from_numpy(values)
    assert array.equals(pa.array(values))
    assert from_numpy(values[::2]).equals(pa.array(values[::2]))  # strided: copied


def test_flags_and_int64_values_read_slices_and_nulls() -> None:
    mask = pa.array([True, None, False, True, True, None, False, True, True, False])
    assert flags(mask).tolist() == [True, False, False, True, True, False, False, True, True, False]
    assert flags(mask.slice(3, 5)).tolist() == [True, True, False, False, True]
    assert flags(pa.chunked_array([[True], [None, True]])).tolist() == [True, False, True]
    numbers = pa.array(np.arange(20, dtype=np.int64))
    assert int64_values(numbers.slice(5, 3)).tolist() == [5, 6, 7]
    assert int64_values(pa.chunked_array([[1, 2], [3]])).tolist() == [1, 2, 3]
    assert string_scalar("/") == pa.scalar("/")
