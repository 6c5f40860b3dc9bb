"""``Tortilla``: an ordered set of samples sharing one metadata schema (spec 5.3)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from taco_gdal.errors import (
    TacoNavigationError,
    TacoPITError,
    TacoSchemaError,
    TacoValidationError,
)
from taco_gdal.format.names import FILE, ID, MAX_DEPTH, PATH, TYPE
from taco_gdal.model._arrow import column_from_values
from taco_gdal.model._columns import ColumnSamples, column_samples
from taco_gdal.model._fields import intern_fields, shared, values_of
from taco_gdal.model._rules import check_key
from taco_gdal.model._schema import diff_schema, merge_into
from taco_gdal.model.sample import Sample

if TYPE_CHECKING:
    from taco_gdal.extensions.base import TortillaExtension

__all__ = ["Tortilla"]

_CORE = (ID, TYPE, PATH)
_NO_EXTENSION: dict[str, pa.Array] = {}
"""Shared by tortillas without extension columns (replaced, never filled)."""
_NO_DESCRIPTIONS: dict[str, str] = {}
_SHARED_TUPLES: dict[tuple[str, ...], tuple[str, ...]] = {}
"""Equal id or kind tuples of small tortillas, one object each."""
_SHARED_LENGTH = 256


class Tortilla:
    """Samples of one folder level, with one schema (and optional padding).

    Args:
        samples: the samples, in order; ids must be unique.
        pad_to: append zero-byte ``__TACOPAD__N`` FILE samples (null metadata) until
            ``len(tortilla)`` is a multiple of ``pad_to``.
        strict_schema: every sample must have the same fields and types (``None``
            agrees with any type); ``False`` fills missing fields with typed nulls.

    Raises:
        TacoValidationError: no samples, duplicate ids, bad ``pad_to``.
        TacoSchemaError: the samples' schemas disagree (names the sample and columns).
        TacoPITError: nesting deeper than levels 0..5.

    Example:
        >>> t = Tortilla([Sample("a", b"1", k=1), Sample("b", b"2", k=2)], pad_to=4)
        >>> t.ids
        ('a', 'b', '__TACOPAD__0', '__TACOPAD__1')
    """

    __slots__ = (
        "_depth",
        "_descriptions",
        "_ext",
        "_frozen",
        "_id_tuple",
        "_kind_tuple",
        "_samples",
        "_size",
        "_types",
        "pad_to",
        "strict_schema",
    )

    def __init__(
        self,
        samples: Iterable[Sample],
        pad_to: int | None = None,
        strict_schema: bool = True,
    ) -> None:
        items = list(samples)
        _check_samples(items)
        self.strict_schema = bool(strict_schema)
        self.pad_to = pad_to
        self._types = _merge_sample_schemas(items, self.strict_schema)
        if pad_to is not None:
            items.extend(_padding(len(items), pad_to))
        for sample in items:
            sample._freeze()
        self._samples: Sequence[Sample] = tuple(items)
        small = len(items) <= _SHARED_LENGTH
        self._id_tuple = shared(_SHARED_TUPLES, tuple(s.id for s in items)) if small else None
        self._kind_tuple = shared(_SHARED_TUPLES, tuple(s.type for s in items)) if small else None
        self._ext: dict[str, pa.Array] = _NO_EXTENSION
        self._descriptions: dict[str, str] = _NO_DESCRIPTIONS
        self._frozen = False
        self._size = sum(s.size for s in items)
        self._depth: int = max(
            (1 + s._tortilla._depth for s in items if s._tortilla is not None), default=0
        )
        if self._depth > MAX_DEPTH:
            raise TacoPITError(
                f"Tortilla of samples {list(self._ids[:3])}...: nesting is {self._depth} "
                f"folder levels deep below it, more than the maximum depth {MAX_DEPTH} "
                f"(levels 0..{MAX_DEPTH})"
            )

    @classmethod
    def from_columns(cls, ids: Any, paths: Any, metadata: Any = None) -> Tortilla:
        """A Tortilla of FILE samples given as columns, for datasets of millions of samples.

        Writes the same bytes as ``Tortilla([Sample(id, path, **row) ...])`` but keeps
        columns instead of a :class:`Sample` per row; paths are checked as
        :class:`Sample` checks them, and indexing makes Samples on demand.

        Args:
            ids: sample ids: a ``pyarrow`` array, NumPy array or sequence of str.
            paths: one file path per id (local, ``s3://``, ``https://``, ``/vsi...``).
            metadata: a ``pyarrow.Table`` or ``{column: values}``, one row per id
                (types kept as given).

        Raises:
            TacoValidationError: an id breaks a rule or repeats, lengths differ, or
                ids or paths hold nulls or non-strings.
            TacoIOError: a path does not exist or is not a regular file.
            TacoSchemaError: metadata of another row count, or a bad column name.

        Example:
            >>> import pyarrow as pa
            >>> paths = pa.array(["src/s000.tif", "src/s001.tif"])
            >>> t = Tortilla.from_columns(["a", "b"], paths, pa.table({"cloud": [0.5, 1.5]}))
            >>> len(t), t.ids, t[1]["cloud"], t[1].type
            (2, ('a', 'b'), 1.5, 'FILE')
        """
        columns = column_samples(ids, paths, metadata)
        tortilla = cls.__new__(cls)
        tortilla.strict_schema = True
        tortilla.pad_to = None
        tortilla._types = columns.types
        tortilla._samples = columns
        tortilla._id_tuple = tortilla._kind_tuple = None
        tortilla._ext = _NO_EXTENSION
        tortilla._descriptions = _NO_DESCRIPTIONS
        tortilla._frozen = False
        tortilla._size = int(columns.sizes.sum())
        tortilla._depth = 0
        return tortilla

    @property
    def _ids(self) -> tuple[str, ...]:
        """Sample ids: kept (shared) for small tortillas, computed for large ones."""
        if self._id_tuple is not None:
            return self._id_tuple
        if isinstance(self._samples, ColumnSamples):
            return tuple(self._samples.ids.to_pylist())
        return tuple(s.id for s in self._samples)

    @property
    def _kinds(self) -> tuple[str, ...]:
        if self._kind_tuple is not None:
            return self._kind_tuple
        if isinstance(self._samples, ColumnSamples):
            return (FILE,) * len(self._samples)
        return tuple(s.type for s in self._samples)

    def __len__(self) -> int:
        return len(self._samples)

    def __iter__(self) -> Iterator[Sample]:
        return iter(self._samples)

    def __getitem__(self, key: int | str) -> Sample:
        if isinstance(key, str):
            try:
                return self._samples[self._ids.index(key)]
            except ValueError:
                raise TacoNavigationError(f"Tortilla has no sample with id {key!r}") from None
        try:
            return self._samples[key]
        except IndexError:
            raise TacoNavigationError(
                f"Tortilla has {len(self._samples)} samples, no position {key}"
            ) from None

    def __repr__(self) -> str:
        return (
            f"Tortilla({len(self)} samples, depth={self._depth}, columns={list(self.column_types)})"
        )

    @property
    def samples(self) -> Sequence[Sample]:
        """The samples in order, padding included."""
        return self._samples

    @property
    def ids(self) -> tuple[str, ...]:
        """Sample ids in order, padding included."""
        return self._ids

    @property
    def sample_types(self) -> tuple[str, ...]:
        """``FILE``/``FOLDER`` per sample, in order."""
        return self._kinds

    @property
    def depth(self) -> int:
        """Folder levels below this tortilla: 0 when every sample is a FILE."""
        return self._depth

    @property
    def size(self) -> int:
        """Total bytes of all files below this tortilla."""
        return self._size

    @property
    def column_types(self) -> Mapping[str, pa.DataType]:
        """Metadata columns (sample fields, then tortilla extension columns) and types."""
        if not self._ext:
            return MappingProxyType(self._types)
        merged = dict(self._types)
        merged.update((name, array.type) for name, array in self._ext.items())
        return MappingProxyType(merged)

    @property
    def schema(self) -> pa.Schema:
        """:attr:`column_types` as a ``pa.Schema``."""
        return pa.schema(list(self.column_types.items()))

    @property
    def field_descriptions(self) -> Mapping[str, str]:
        """Descriptions of the tortilla extension columns."""
        return MappingProxyType(self._descriptions)

    def column(self, name: str) -> pa.Array:
        """One column over this tortilla's samples (``id``, ``type``, ``path`` or a field).

        Example:
            >>> Tortilla([Sample("a", b"1", k=1)]).column("k").to_pylist()
            [1]
        """
        if isinstance(self._samples, ColumnSamples) and name in (ID, PATH):
            return self._samples.ids if name == ID else self._samples.paths
        if name == ID:
            return pa.array(self._ids, pa.string())
        if name == TYPE:
            return pa.array(self._kinds, pa.string())
        if name == PATH:
            return pa.array([s.file_path for s in self._samples], pa.string())
        data_type = self.column_types.get(name)
        if data_type is None:
            raise TacoNavigationError(
                f"Tortilla has no column {name!r}; columns: {list(self.column_types)}"
            )
        return self._chunk(name, data_type)

    def _chunk(self, name: str, data_type: pa.DataType) -> pa.Array:
        ext = self._ext.get(name)
        if ext is not None:
            return ext if ext.type == data_type else ext.cast(data_type)
        if isinstance(self._samples, ColumnSamples):
            return self._samples.column(name, data_type)
        return column_from_values(values_of(self._samples, name), data_type)

    def export_metadata(self) -> pa.Table:
        """One row per sample: ``id``, ``type``, ``path``, then every metadata column.

        Example:
            >>> Tortilla([Sample("a", b"1", k=1)]).export_metadata().column_names
            ['id', 'type', 'path', 'k']
        """
        names = [*_CORE, *self.column_types]
        return pa.table([self.column(name) for name in names], names=names)

    metadata_table = property(export_metadata)

    def extend_with(self, extension: TortillaExtension) -> Tortilla:
        """Add columns computed over all samples; returns ``self`` for chaining.

        Raises:
            TacoValidationError: not a TortillaExtension, a bad key, or the
                tortilla is already inside a Sample.
            TacoSchemaError: wrong row count, or a column that already exists.
        """
        # imported here: the extensions package imports pyproj and shapely (slow)
        from taco_gdal.extensions.base import TortillaExtension

        if not isinstance(extension, TortillaExtension):
            raise TacoValidationError(
                f"Tortilla.extend_with: expected a TortillaExtension, found "
                f"{type(extension).__name__} (per-sample metadata goes through Sample.extend_with)"
            )
        self._check_mutable()
        table = extension(self)
        existing = self.column_types
        for name in table.column_names:
            check_key(name, f"Tortilla extension {type(extension).__name__}")
            if name in existing:
                raise TacoSchemaError(
                    f"Tortilla extension {type(extension).__name__}: column {name!r} already "
                    f"exists (type {existing[name]})"
                )
        self._ext = dict(self._ext)
        for name in table.column_names:
            self._ext[name] = table.column(name).combine_chunks()
        descriptions = extension.get_field_descriptions()
        self._descriptions = dict(self._descriptions)
        self._descriptions.update({k: v for k, v in descriptions.items() if k in self._ext})
        return self

    def pop(self, field: str) -> pa.Table:
        """Remove a column added by a TortillaExtension and return it (one row per sample).

        Raises:
            TacoValidationError: ``field`` is a core or sample field (use ``Sample.pop``).
            TacoNavigationError: no such column.
        """
        if field in _CORE or field in self._types:
            raise TacoValidationError(
                f"Tortilla.pop: {field!r} is a core or sample field; only columns added by "
                "a TortillaExtension can be popped here"
            )
        self._check_mutable()
        if field not in self._ext:
            raise TacoNavigationError(
                f"Tortilla has no extension column {field!r}; extension columns: {list(self._ext)}"
            )
        self._ext = dict(self._ext)
        array = self._ext.pop(field)
        self._descriptions = {k: v for k, v in self._descriptions.items() if k != field}
        return pa.table([array], names=[field])

    def _check_mutable(self) -> None:
        if self._frozen:
            raise TacoValidationError(
                "this Tortilla is already the content of a FOLDER sample or a Taco; extend it "
                "before nesting it (its schema was checked then)"
            )

    def _freeze(self) -> None:
        self._frozen = True


def _check_samples(items: list[Sample]) -> None:
    if not items:
        raise TacoValidationError("Tortilla: expected at least one sample, found none")
    for position, item in enumerate(items):
        if not isinstance(item, Sample):
            raise TacoValidationError(
                f"Tortilla: item {position} must be a Sample, found {type(item).__name__}"
            )
    ids = [s.id for s in items]
    if len(set(ids)) != len(ids):
        duplicates = [(k, n) for k, n in Counter(ids).items() if n > 1]
        listed = ", ".join(f"{k!r} ({n}x)" for k, n in duplicates[:10])
        raise TacoValidationError(
            f"Tortilla: sample ids must be unique among siblings; duplicated: {listed}"
        )


def _padding(count: int, pad_to: object) -> list[Sample]:
    if isinstance(pad_to, bool) or not isinstance(pad_to, int) or pad_to < 1:
        raise TacoValidationError(f"Tortilla: pad_to must be a positive integer, found {pad_to!r}")
    missing = (-count) % pad_to
    return [Sample._padding(index) for index in range(missing)]


def _merge_sample_schemas(items: list[Sample], strict: bool) -> dict[str, pa.DataType]:
    """One interned schema for the samples; raises TacoSchemaError naming a misfit."""
    first = items[0]
    merged = first._types
    copied = False
    for position in range(1, len(items)):
        types = items[position]._types
        if types is merged or types == merged:
            continue
        diff = diff_schema(types, merged, same_names=strict)
        if diff:
            sample = items[position]
            hint = (
                "; Tortilla(..., strict_schema=False) fills missing columns with nulls"
                if strict and (diff.missing or diff.extra)
                else ""
            )
            raise TacoSchemaError(
                f"Tortilla: sample {position} ({sample.id!r}) does not match the schema of "
                f"sample 0 ({first.id!r}): {diff.describe('sample 0')}{hint}"
            )
        if not copied:
            merged, copied = dict(merged), True
        merge_into(merged, types)
    return intern_fields(merged)
