"""Arrow helpers of the data model: type inference and column building.

Samples keep their metadata as plain Python values next to an Arrow type per
field; level tables are built column by column from those values with one
``pa.array`` call per column (no per-row tables, no per-row dicts).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final

import pyarrow as pa

from taco_gdal.errors import TacoSchemaError

__all__ = ["column_from_values", "infer_type", "is_null_type", "type_name"]

_NAIVE_TIMESTAMP: Final = pa.timestamp("us")
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1

# Exact Python types whose Arrow type pyarrow would infer anyway; skipping
# ``pa.array([value])`` for them makes building 100k samples cheap.
_FAST_TYPES: Final[dict[type, pa.DataType]] = {
    bool: pa.bool_(),
    float: pa.float64(),
    str: pa.string(),
    bytes: pa.binary(),
}


def infer_type(value: Any) -> pa.DataType:
    """The Arrow type pyarrow infers for one Python value.

    Args:
        value: any value ``pa.array`` accepts (scalars, lists, dicts, datetimes, numpy values).

    Raises:
        TacoSchemaError: pyarrow cannot represent the value.

    Example:
        >>> infer_type(1.5)
        DataType(double)
        >>> infer_type([1, 2])
        ListType(list<item: int64>)
    """
    kind = type(value)
    fast = _FAST_TYPES.get(kind)
    if fast is not None:
        return fast
    if kind is int and _INT64_MIN <= value <= _INT64_MAX:
        return pa.int64()
    if value is None:
        return pa.null()
    if kind is datetime and value.tzinfo is None:
        return _NAIVE_TIMESTAMP
    if isinstance(value, pa.Scalar):
        return value.type
    try:
        return pa.array([value]).type
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError) as exc:
        raise TacoSchemaError(
            f"expected a value Arrow can store, found {kind.__name__} {value!r}: {exc}"
        ) from exc


def column_from_values(values: Sequence[Any], data_type: pa.DataType) -> pa.Array:
    """One Arrow array of ``data_type`` from Python values (``None`` is null).

    Extension types are built from their storage type.

    Example:
        >>> column_from_values([1, None], pa.int8()).to_pylist()
        [1, None]
    """
    if isinstance(data_type, pa.BaseExtensionType):
        storage = pa.array(values, type=data_type.storage_type)
        return pa.ExtensionArray.from_storage(data_type, storage)
    return pa.array(values, type=data_type)


def is_null_type(data_type: pa.DataType) -> bool:
    """True for Arrow's ``null`` type (a field whose only value so far was ``None``)."""
    return bool(data_type == pa.null())


def type_name(data_type: pa.DataType) -> str:
    """The type string COLLECTION.json uses: ``str(type).lower()``.

    Example:
        >>> type_name(pa.list_(pa.int64()))
        'list<item: int64>'
    """
    return str(data_type).lower()
