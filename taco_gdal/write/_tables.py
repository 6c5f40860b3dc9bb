"""The tables a container stores: level tables and ``__meta__`` tables, columns in order.

Stored column order (reference writer): ``id``, ``type``, the user and extension
columns, then ``internal:current_id``, ``internal:parent_id``,
``internal:offset``, ``internal:size``, ``internal:relative_path``.  The
source ``path`` column is never stored.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from taco_gdal.format.names import (
    CHECKSUM,
    ID,
    INTERNAL_COLUMN_ORDER,
    INTERNAL_PREFIX,
    OFFSET,
    PATH,
    SIZE,
    TYPE,
)
from taco_gdal.model._arrow import from_numpy, string_array

__all__ = ["local_columns", "stored_level", "with_checksums", "with_offsets"]

IntArray = npt.NDArray[np.int64]


def _user_columns(names: Sequence[str]) -> list[str]:
    rest = [n for n in names if n not in (ID, TYPE, PATH) and not n.startswith(INTERNAL_PREFIX)]
    return [ID, TYPE, *rest]


def _ordered(names: Sequence[str]) -> list[str]:
    internal = [n for n in INTERNAL_COLUMN_ORDER if n in names]
    other = [n for n in names if n.startswith(INTERNAL_PREFIX) and n not in INTERNAL_COLUMN_ORDER]
    return [*_user_columns(names), *internal, *other]


def local_columns(names: Sequence[str]) -> list[str]:
    """Columns of a ``__meta__`` table: id, type and the user columns of the children.

    Example:
        >>> local_columns(["id", "type", "cloud", "internal:parent_id", "path"])
        ['id', 'type', 'cloud']
    """
    return _user_columns(names)


def with_checksums(table: pa.Table, checksums: Sequence[str | None] | None) -> pa.Table:
    """``table`` with its ``taco_gdal:checksum`` column set from ``checksums`` (None: unchanged).

    A column already present (a dataset exported from one written with digests)
    is replaced, so the stored digests are always those computed while copying.

    Example:
        >>> t = pa.table({"id": ["a", "b"], "type": ["FILE", "FOLDER"]})
        >>> with_checksums(t, ["xxh3:00", None]).column("taco_gdal:checksum").to_pylist()
        ['xxh3:00', None]
    """
    if checksums is None:
        return table
    if CHECKSUM in table.column_names:
        table = table.drop_columns([CHECKSUM])
    return table.append_column(CHECKSUM, string_array(checksums))


def with_offsets(
    table: pa.Table,
    offsets: IntArray,
    sizes: IntArray,
    checksums: Sequence[str | None] | None = None,
    copy: bool = True,
) -> pa.Table:
    """``table`` plus ``internal:offset`` / ``internal:size`` (int64), in stored order.

    ``checksums`` (one ``"<algorithm>:<hex>"`` or None per row) adds the digest column.
    ``copy=False`` shares ``offsets`` and ``sizes`` (int64 arrays no one changes
    any more; 16 MB at a million rows) instead of copying them.
    """
    extra = with_checksums(table, checksums)
    as_int64 = np.array if copy else np.asarray
    extra = extra.append_column(OFFSET, from_numpy(as_int64(offsets, dtype=np.int64)))
    extra = extra.append_column(SIZE, from_numpy(as_int64(sizes, dtype=np.int64)))
    return extra.select(_ordered(extra.column_names))


def stored_level(table: pa.Table) -> pa.Table:
    """A package level table as stored: ``path`` dropped, columns in stored order.

    Example:
        >>> t = pa.table({"internal:parent_id": [0], "id": ["a"], "type": ["FILE"],
        ...               "path": ["/x"], "internal:current_id": [0]})
        >>> stored_level(t).column_names
        ['id', 'type', 'internal:current_id', 'internal:parent_id']
    """
    return table.select(_ordered([n for n in table.column_names if n != PATH]))
