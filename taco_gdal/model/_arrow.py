"""Arrow helpers of the data model: type inference and column building (one call per column)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from taco_gdal.errors import TacoSchemaError

__all__ = [
    "ascii_rows_array",
    "column_from_values",
    "flags",
    "from_numpy",
    "infer_type",
    "int64_values",
    "is_null_type",
    "string_array",
    "string_scalar",
    "type_name",
]

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


# pyarrow imports pandas on the first ``pa.array``/``pa.scalar``/``to_numpy``; the helpers
# below build a writer's common columns from Arrow buffers so a write never imports it.
_NUMPY_TYPES: Final[dict[str, pa.DataType]] = {
    "int64": pa.int64(),
    "int32": pa.int32(),
    "uint64": pa.uint64(),
    "float64": pa.float64(),
    "float32": pa.float32(),
}
_PYTHON_COLUMNS: Final[dict[pa.DataType, tuple[type, str]]] = {
    pa.float64(): (float, "float64"),
    pa.int64(): (int, "int64"),
}


def from_numpy(values: np.ndarray[Any, Any]) -> pa.Array:
    """An Arrow array over a 1-d NumPy array of numbers or booleans (no pandas import)."""
    if values.dtype == np.bool_:
        bits = np.packbits(values, bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(bits)])
    data_type = _NUMPY_TYPES.get(values.dtype.name)
    if data_type is None or values.ndim != 1:
        return pa.array(values)
    values = np.ascontiguousarray(values)
    return pa.Array.from_buffers(data_type, len(values), [None, pa.py_buffer(values)])


def int64_values(array: pa.Array | pa.ChunkedArray) -> np.ndarray[Any, np.dtype[np.int64]]:
    """The values of an int64 column without nulls as NumPy (a view when in one chunk)."""
    if isinstance(array, pa.ChunkedArray):
        array = array.chunk(0) if array.num_chunks == 1 else array.combine_chunks()
    if array.type != pa.int64() or array.null_count:
        return np.asarray(array.to_numpy(zero_copy_only=False), dtype=np.int64)
    data = array.buffers()[1]
    if data is None:
        return np.zeros(0, dtype=np.int64)
    return np.frombuffer(data, dtype=np.int64, count=len(array), offset=array.offset * 8)


def flags(mask: pa.Array | pa.ChunkedArray) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """A boolean Arrow column as NumPy, null as False (no pandas import)."""
    if isinstance(mask, pa.ChunkedArray):
        mask = mask.combine_chunks()
    n = len(mask)
    if n == 0:
        return np.zeros(0, dtype=np.bool_)
    validity, data = mask.buffers()[:2]

    def bits(buffer: pa.Buffer) -> np.ndarray[Any, np.dtype[np.bool_]]:
        raw = np.frombuffer(buffer, dtype=np.uint8)
        unpacked = np.unpackbits(raw, bitorder="little", count=mask.offset + n)
        return unpacked[mask.offset :].astype(np.bool_)

    out = bits(data)
    if validity is not None and mask.null_count:
        out &= bits(validity)
    return out


def string_scalar(text: str) -> pa.Scalar:
    """A ``string`` scalar (``pa.scalar`` would import pandas)."""
    return string_array([text])[0]


def _python_column(values: Sequence[Any], data_type: pa.DataType) -> pa.Array | None:
    """``values`` as a double/int64 column when each is a plain float/int or None; else None."""
    kind, dtype = _PYTHON_COLUMNS[data_type]
    valid = np.fromiter((v is not None for v in values), np.bool_, len(values))
    nulls = len(values) - int(np.count_nonzero(valid))
    present = values if not nulls else [v for v in values if v is not None]
    if not all(type(v) is kind for v in present):
        return None
    try:
        numbers = np.zeros(len(values), dtype=dtype)
        numbers[valid] = np.fromiter(present, dtype=dtype, count=len(present))
    except OverflowError:  # an int past int64: pa.array says so
        return None
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None
    return pa.Array.from_buffers(data_type, len(values), [bitmap, pa.py_buffer(numbers)], nulls)


def column_from_values(values: Sequence[Any], data_type: pa.DataType) -> pa.Array:
    """One Arrow array of ``data_type`` from Python values (``None`` is null)."""
    if data_type in _PYTHON_COLUMNS:
        column = _python_column(values, data_type)
        if column is not None:
            return column
    if is_null_type(data_type):
        return pa.nulls(len(values))
    if isinstance(data_type, pa.BaseExtensionType):
        storage = pa.array(values, type=data_type.storage_type)
        return pa.ExtensionArray.from_storage(data_type, storage)
    if data_type == pa.string():
        return string_array(values)
    return pa.array(values, type=data_type)


_STRING_CHUNK: Final = 65_536
_INT32_MAX: Final = 2**31 - 1


def string_array(values: Sequence[str | None]) -> pa.Array:
    """A ``string`` array of ``values`` (None is null) whose buffers have their exact size.

    ``pa.array`` grows its buffer by doubling (up to twice the text at once for
    millions of paths); here byte lengths are counted first, then encoded once.
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


def ascii_rows_array(rows: npt.NDArray[np.uint8], valid: npt.NDArray[np.bool_]) -> pa.Array:
    """A ``string`` array of fixed-width ASCII ``rows`` (null where not ``valid``), no str per row.

    Example:
        >>> rows = np.frombuffer(b"abcdef", np.uint8).reshape(3, 2)
        >>> ascii_rows_array(rows, np.array([True, False, True])).to_pylist()
        ['ab', None, 'ef']
    """
    n, width = rows.shape
    if n * width > _INT32_MAX:  # past 32-bit offsets: the general builder decides
        text = [row.tobytes().decode("ascii") for row in rows]
        return string_array([t if ok else None for t, ok in zip(text, valid, strict=True)])
    offsets = np.arange(0, (n + 1) * width, width, dtype=np.int64).astype(np.int32)
    nulls = n - int(np.count_nonzero(valid))
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None
    return pa.StringArray.from_buffers(
        n, pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(rows)), bitmap, nulls
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
