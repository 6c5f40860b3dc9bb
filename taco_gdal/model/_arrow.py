"""Arrow helpers of the data model: type inference and column building.

Samples keep their metadata as plain Python values next to an Arrow type per
field; level tables are built column by column from those values with one
``pa.array`` call per column (no per-row tables, no per-row dicts).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final

import numpy as np
import pyarrow as pa

from taco_gdal.errors import TacoSchemaError

__all__ = ["column_from_values", "infer_type", "is_null_type", "string_array", "type_name"]

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
    if data_type == pa.string() and len(values) > _STRING_CHUNK:
        return string_array(values)
    return pa.array(values, type=data_type)


_STRING_CHUNK: Final = 65_536
_INT32_MAX: Final = 2**31 - 1


def string_array(values: Sequence[str | None]) -> pa.Array:
    """A ``string`` array of ``values`` (None is null) whose buffers have their exact size.

    ``pa.array`` grows its data buffer by doubling: for a million 48-byte paths
    it held 94 MB at once and kept up to 64 MB for 48 MB of text.  Here the
    byte lengths are counted first, 65,536 strings at a time, and the text is
    then encoded straight into one buffer of the right size.

    Example:
        >>> string_array(["a", None, "ñ"]).to_pylist()
        ['a', None, 'ñ']
    """
    n = len(values)
    lengths = np.zeros(n, dtype=np.int64)
    valid = np.ones(n, dtype=np.bool_)
    try:
        for start in range(0, n, _STRING_CHUNK):
            chunk = values[start : start + _STRING_CHUNK]
            if None in chunk:
                missing = [i for i, v in enumerate(chunk) if v is None]
                valid[start + np.asarray(missing, dtype=np.int64)] = False
                chunk = ["" if v is None else v for v in chunk]
            text = "".join(chunk)  # type: ignore[arg-type]
            count = (
                map(len, chunk)  # type: ignore[arg-type]
                if text.isascii()
                else (len(v.encode("utf-8")) for v in chunk)  # type: ignore[union-attr]
            )
            lengths[start : start + len(chunk)] = np.fromiter(count, np.int64, len(chunk))
    except (TypeError, UnicodeEncodeError):  # not all str: pa.array says what is wrong
        return pa.array(values, pa.string())
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    del lengths
    if offsets[-1] > _INT32_MAX:
        return pa.array(values, pa.string())
    data = np.empty(int(offsets[-1]), dtype=np.uint8)
    for start in range(0, n, _STRING_CHUNK):
        chunk = values[start : start + _STRING_CHUNK]
        encoded = "".join("" if v is None else v for v in chunk).encode("utf-8")
        first = int(offsets[start])
        data[first : first + len(encoded)] = np.frombuffer(encoded, dtype=np.uint8)
    nulls = n - int(np.count_nonzero(valid))
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None
    return pa.StringArray.from_buffers(
        n, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data), bitmap, nulls
    )


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
