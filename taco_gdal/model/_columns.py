"""Samples declared as columns: a Tortilla of many FILE samples without a ``Sample`` each.

Backs :meth:`Tortilla.from_columns <taco_gdal.model.Tortilla.from_columns>`: a million
``Sample`` objects cost hundreds of megabytes, the same columns only their own bytes.
Tables written are byte for byte those of the same samples built one by one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any, Final, overload

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from taco_gdal.errors import TacoIOError, TacoSchemaError, TacoValidationError
from taco_gdal.model._arrow import flags, from_numpy, string_array
from taco_gdal.model._fields import FieldMap, intern_fields
from taco_gdal.model._rules import check_key, check_sample_id
from taco_gdal.model.sample import Sample, locate

__all__ = ["ColumnSamples", "column_samples"]

_CHUNK: Final = 65_536
"""Paths are checked this many at a time (Python strings exist only for one chunk)."""
_BAD_ID: Final = r"[/\\:]|^__|^\.\.?$|^$"
"""Ids :func:`~taco_gdal.model._rules.check_sample_id` rejects, as one regex."""


class ColumnSamples(Sequence[Sample]):
    """FILE samples held as columns (ids, paths, sizes, metadata); Samples made when indexed."""

    __slots__ = ("ids", "metadata", "paths", "sizes", "types")

    def __init__(
        self,
        ids: pa.StringArray,
        paths: pa.StringArray,
        sizes: np.ndarray[Any, np.dtype[np.int64]],
        metadata: pa.Table | None,
        types: FieldMap,
    ) -> None:
        self.ids = ids
        self.paths = paths
        self.sizes = sizes
        self.metadata = metadata
        self.types = types

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, index: int) -> Sample: ...
    @overload
    def __getitem__(self, index: slice) -> list[Sample]: ...
    def __getitem__(self, index: int | slice) -> Sample | list[Sample]:
        if isinstance(index, slice):
            return [self._sample(i) for i in range(*index.indices(len(self)))]
        position = index + len(self) if index < 0 else index
        if not 0 <= position < len(self):
            raise IndexError(f"sample position {index} out of range for {len(self)} samples")
        return self._sample(position)

    def __iter__(self) -> Iterator[Sample]:
        return (self._sample(i) for i in range(len(self)))

    def _sample(self, row: int) -> Sample:
        values = (
            () if self.metadata is None else tuple(c[row].as_py() for c in self.metadata.columns)
        )
        return Sample._from_row(
            self.ids[row].as_py(), self.paths[row].as_py(), int(self.sizes[row]), self.types, values
        )

    def column(self, name: str, data_type: pa.DataType) -> pa.Array:
        """Metadata column ``name`` as ``data_type`` (nulls when the samples lack it)."""
        if self.metadata is None or name not in self.types:
            return pa.nulls(len(self), data_type)
        array = self.metadata.column(name).combine_chunks()
        return array if array.type == data_type else array.cast(data_type)


def _strings(values: object, what: str) -> pa.StringArray:
    """``values`` (Arrow, NumPy or str sequence) as one ``string`` array without nulls."""
    try:
        if isinstance(values, pa.Array | pa.ChunkedArray):
            array = values
        elif isinstance(values, list | tuple):
            array = string_array(values)
        else:
            array = pa.array(values)
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        if not pa.types.is_string(array.type):
            array = array.cast(pa.string())
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError) as exc:
        raise TacoValidationError(
            f"Tortilla.from_columns: {what}: expected strings: {exc}"
        ) from exc
    if array.null_count:
        first = int(np.flatnonzero(flags(array.is_null()))[0])
        raise TacoValidationError(
            f"Tortilla.from_columns: {what}: expected no nulls, found {array.null_count} "
            f"(first at row {first})"
        )
    return array


def _check_ids(ids: pa.StringArray) -> None:
    bad = pc.match_substring_regex(ids, _BAD_ID)
    if pc.any(bad).as_py():
        row = int(np.flatnonzero(flags(bad))[0])
        check_sample_id(ids[row].as_py())  # raises with the rule's own message
    # sorting, not count_distinct: no hash table of every id
    ordered = ids.take(pc.sort_indices(ids))
    repeated = flags(pc.equal(ordered[1:], ordered[:-1]))
    if repeated.any():
        counts = Counter(ordered.filter(from_numpy(np.append(repeated, False))).to_pylist())
        listed = ", ".join(f"{k!r} ({n + 1}x)" for k, n in list(counts.items())[:10])
        raise TacoValidationError(
            f"Tortilla: sample ids must be unique among siblings; duplicated: {listed}"
        )


def _locate_all(
    ids: pa.StringArray, paths: pa.StringArray
) -> tuple[pa.StringArray, np.ndarray[Any, np.dtype[np.int64]]]:
    """Each path checked and made GDAL-usable as :class:`Sample` does; and the sizes."""
    sizes = np.empty(len(paths), dtype=np.int64)
    chunks: list[pa.Array] = []
    changed = False
    for start in range(0, len(paths), _CHUNK):
        given = paths.slice(start, _CHUNK)
        texts = given.to_pylist()
        located: list[str] = []
        counted: list[int] = []
        for offset, text in enumerate(texts):
            try:
                path, size = locate(text, "")
            except TacoIOError:  # again, for a message naming the sample
                locate(text, f"sample {ids[start + offset].as_py()!r}")
                raise
            located.append(path)
            counted.append(size)
        sizes[start : start + len(counted)] = counted
        if located != texts:
            changed = True
            given = string_array(located)
        chunks.append(given)
    if not changed:
        return paths, sizes
    return pa.concat_arrays(chunks), sizes


def _metadata(metadata: object, rows: int) -> pa.Table | None:
    if metadata is None:
        return None
    try:
        table = metadata if isinstance(metadata, pa.Table) else pa.table(metadata)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as exc:
        raise TacoSchemaError(
            f"Tortilla.from_columns: metadata: expected a pyarrow.Table or a mapping of "
            f"columns, found {type(metadata).__name__}: {exc}"
        ) from exc
    if table.num_rows != rows:
        raise TacoSchemaError(
            f"Tortilla.from_columns: metadata has {table.num_rows} rows, expected {rows} "
            "(one per id)"
        )
    names = table.column_names
    if len(set(names)) != len(names):
        raise TacoSchemaError(f"Tortilla.from_columns: metadata repeats columns {names}")
    for name in names:
        check_key(name, "Tortilla.from_columns")
    return table.combine_chunks() if table.num_columns else None


def column_samples(ids: object, paths: object, metadata: object = None) -> ColumnSamples:
    """Check and hold the columns of :meth:`Tortilla.from_columns` (which documents errors)."""
    id_array = _strings(ids, "ids")
    path_array = _strings(paths, "paths")
    if len(id_array) != len(path_array):
        raise TacoValidationError(
            f"Tortilla.from_columns: expected as many paths as ids, found {len(path_array)} "
            f"paths for {len(id_array)} ids"
        )
    if not len(id_array):
        raise TacoValidationError("Tortilla: expected at least one sample, found none")
    _check_ids(id_array)
    table = _metadata(metadata, len(id_array))
    located, sizes = _locate_all(id_array, path_array)
    types = intern_fields({} if table is None else {f.name: f.type for f in table.schema})
    return ColumnSamples(id_array, located, sizes, table, types)
