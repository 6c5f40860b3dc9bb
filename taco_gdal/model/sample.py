"""``Sample``: the smallest unit of a dataset, a file or a folder plus its metadata (spec 5.2)."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import weakref
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, Literal

import pyarrow as pa

from taco_gdal.errors import (
    TacoIOError,
    TacoNavigationError,
    TacoSchemaError,
    TacoValidationError,
)
from taco_gdal.format.names import FILE, FOLDER, ID, PADDING_PREFIX, PATH, SAMPLE_TYPES, TYPE
from taco_gdal.format.vsi import to_vsi
from taco_gdal.io.vsi import file_size
from taco_gdal.model._arrow import column_from_values, infer_type
from taco_gdal.model._fields import (
    EMPTY,
    MAX_INTERNED,
    FieldMap,
    intern_fields,
    position,
    shared,
    value_at,
)
from taco_gdal.model._rules import check_key, check_sample_id

if TYPE_CHECKING:
    from taco_gdal.model.tortilla import Tortilla

__all__ = ["Sample", "SampleTypeArg", "locate"]

SampleTypeArg = Literal["auto", "FILE", "FOLDER"]

_CORE_FIELDS: Final = (ID, TYPE, PATH)
_CHECKED_KEYS: set[str] = set()
"""Keys already known to be valid (the same few repeat over 100k samples)."""
_CHECKED_KEYS_MAX: Final = 10_000


def _is_clean_absolute(path: str) -> bool:
    """True when ``os.path.abspath`` would return ``path`` unchanged (cheap check)."""
    return (
        path[:1] == "/"
        and path[:2] != "//"
        and path[-1:] != "/"
        and "//" not in path
        and "/./" not in path
        and "/../" not in path
        and not path.endswith(("/.", "/.."))
    )


def _remove_file(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def locate(text: str, where: str) -> tuple[str, int]:
    """GDAL-usable path and size of a local path, URL or ``/vsi...`` path.

    Raises:
        TacoIOError: the file does not exist, cannot be reached or is not a regular file
            (the message names ``where``, e.g. ``"sample 'a'"``).

    Example:
        >>> path, size = locate("src/s000.tif", "sample 'a'")
        >>> path.endswith("/src/s000.tif") and path.startswith("/"), size > 0
        (True, True)
    """
    if text.startswith("/vsi") or "://" in text:
        gdal_path = to_vsi(text)
        if gdal_path.startswith("/vsi"):
            try:
                return gdal_path, file_size(gdal_path)
            except TacoIOError as exc:
                raise TacoIOError(f"{where}: path {text!r}: {exc}") from exc
    else:
        gdal_path = text if _is_clean_absolute(text) else os.path.abspath(os.path.expanduser(text))
    try:
        info = os.stat(gdal_path)
    except OSError as exc:
        raise TacoIOError(
            f"{where}: path {text!r} does not exist or cannot be reached: {exc.strerror}"
        ) from exc
    if not stat.S_ISREG(info.st_mode):
        raise TacoIOError(
            f"{where}: path {text!r} is not a regular file (a FILE sample points "
            "to one file; wrap folders in a Tortilla)"
        )
    # one stat per path: readability is checked when the writer opens the file
    return gdal_path, info.st_size


_IDS: dict[str, str] = {}
"""Ids that repeat, one string each (:func:`~taco_gdal.model._fields.shared`)."""


class _State:
    """A sample's field map and frozen flag (shared by most samples), plus what few
    samples have: field descriptions, a temporary file (those get their own state)."""

    __slots__ = ("descriptions", "finalizer", "frozen", "frozen_twin", "shared", "types")

    def __init__(self, types: FieldMap, frozen: bool, shared: bool = False) -> None:
        self.types = types
        self.frozen = frozen
        self.shared = shared
        self.descriptions: dict[str, str] | None = None
        self.finalizer: weakref.finalize[Any, Any] | None = None
        self.frozen_twin: _State | None = None
        """The shared frozen state of the same map, so freezing is one attribute read."""


_STATES: dict[tuple[int, bool], _State] = {}
"""Shared states by ``(id(field map), frozen)`` (a state holds its map, so the id stays valid)."""


def _shared_state(types: FieldMap, frozen: bool) -> _State:
    key = (id(types), frozen)
    state = _STATES.get(key)
    if state is not None and state.types is types:
        return state
    if len(_STATES) >= MAX_INTERNED:
        return _State(types, frozen)
    state = _STATES[key] = _State(types, frozen, shared=True)
    return state


_EMPTY_STATE: Final = _shared_state(EMPTY, False)


class Sample:
    """One file (FILE) or one nested :class:`Tortilla` (FOLDER) with its metadata.

    Args:
        id: unique among siblings; no ``/``, ``\\`` or ``:``, not starting with ``__``.
        path: a local, remote or GDAL path (``s3://``, ``https://``, ``/vsi...``),
            ``bytes`` (written to a temporary file, removed by :meth:`cleanup` or on
            garbage collection) or a :class:`Tortilla` (FOLDER).
        type: ``"auto"`` (inferred from ``path``), ``"FILE"`` or ``"FOLDER"``.
        temp_dir: folder for the temporary file of ``bytes`` data (default: system's).
        **metadata: fields such as ``cloud_cover`` or ``stac:crs``; Arrow types are
            inferred unless given as ``pyarrow`` scalars (or a one-row table via
            :meth:`extend_with`).

    Raises:
        TacoValidationError: invalid id, key or type.
        TacoIOError: ``path`` does not exist or cannot be read.

    Example:
        >>> s = Sample("a", b"hello", cloud_cover=12.5)
        >>> s.type, s.size, s["cloud_cover"]
        ('FILE', 5, 12.5)
        >>> s.cleanup()
    """

    # A million samples may be built before a write: six slots (80 bytes), the field
    # map and flags in a shared ``_state``, the path or Tortilla in one slot.
    __slots__ = ("__weakref__", "_ref", "_size", "_state", "_vals", "id")

    id: str

    def __init__(
        self,
        id: str,
        path: str | os.PathLike[str] | bytes | Tortilla,
        type: SampleTypeArg = "auto",
        temp_dir: str | os.PathLike[str] | None = None,
        **metadata: Any,
    ) -> None:
        self.id = shared(_IDS, check_sample_id(id))  # ``b0`` under each of 100k folders: one string
        self._init_empty()
        inferred = self._attach(path, temp_dir)
        self._resolve_type(type, inferred)
        if metadata:
            self._add_values(metadata, None)

    def _init_empty(self) -> None:
        self._state: _State = _EMPTY_STATE
        self._vals: Any = ()
        """Values in ``_types`` order: a tuple, or the bare value when there is one field."""
        self._ref: str | Tortilla | None = None
        """The GDAL-usable path of a FILE, the Tortilla of a FOLDER, None for padding."""
        self._size = 0

    @classmethod
    def _padding(cls, index: int) -> Sample:
        """A zero-byte FILE sample ``__TACOPAD__{index}`` (only Tortilla creates these)."""
        sample = cls.__new__(cls)
        sample.id = f"{PADDING_PREFIX}{index}"
        sample._init_empty()
        return sample

    @classmethod
    def _from_row(
        cls, id: str, path: str, size: int, types: FieldMap, values: tuple[Any, ...]
    ) -> Sample:
        """A frozen FILE sample of already checked parts (a row of ``Tortilla.from_columns``)."""
        sample = cls.__new__(cls)
        sample.id = id
        sample._init_empty()
        sample._ref, sample._size = path, size
        sample._set_values(types, values)
        sample._freeze()
        return sample

    def _where(self) -> str:
        return f"sample {self.id!r}"

    def _attach(self, path: object, temp_dir: str | os.PathLike[str] | None) -> str:
        if type(path) is str:  # the common case first: no ABC check (100k+ samples)
            self._ref, self._size = locate(path, self._where())
            return FILE
        if isinstance(path, str | os.PathLike):
            text = os.fspath(path)
            if isinstance(text, str):
                self._ref, self._size = locate(text, self._where())
                return FILE
        elif isinstance(path, bytes | bytearray | memoryview):
            self._ref = self._write_temp(bytes(path), temp_dir)
            self._size = len(path)
            return FILE
        else:
            from taco_gdal.model.tortilla import Tortilla  # circular: Tortilla holds Samples

            if isinstance(path, Tortilla):
                path._freeze()
                self._ref = path
                self._size = path.size
                return FOLDER
        raise TacoValidationError(
            f"{self._where()}: path must be a str, os.PathLike, bytes or Tortilla, "
            f"found {type(path).__name__}"
        )

    def _write_temp(self, data: bytes, temp_dir: str | os.PathLike[str] | None) -> str:
        folder = os.fspath(temp_dir) if temp_dir is not None else tempfile.gettempdir()
        try:
            os.makedirs(folder, exist_ok=True)
            handle, name = tempfile.mkstemp(prefix="taco_gdal-", suffix=".bin", dir=folder)
            with os.fdopen(handle, "wb") as out:
                out.write(data)
        except OSError as exc:
            raise TacoIOError(
                f"{self._where()}: cannot write {len(data)} bytes to a temporary file in "
                f"{folder!r}: {exc}"
            ) from exc
        self._own_state().finalizer = weakref.finalize(self, _remove_file, name)
        return name

    def _resolve_type(self, requested: object, inferred: str) -> None:
        """Check the requested type against the path (the type itself is not stored)."""
        if requested == "auto":
            return
        if requested not in SAMPLE_TYPES:
            raise TacoValidationError(
                f"{self._where()}: type must be one of 'auto', 'FILE', 'FOLDER', "
                f"found {requested!r}"
            )
        if requested != inferred:
            given = "a Tortilla" if inferred == FOLDER else "a file path or bytes"
            raise TacoValidationError(
                f"{self._where()}: type {requested!r} does not match path, which is {given} "
                f"(type {inferred!r})"
            )

    @property
    def type(self) -> str:
        """``"FOLDER"`` for a sample holding a Tortilla, ``"FILE"`` otherwise (padding too)."""
        return FILE if self._ref is None or isinstance(self._ref, str) else FOLDER

    @property
    def path(self) -> str | Tortilla | None:
        """GDAL-usable path of a FILE (None for padding), the Tortilla of a FOLDER."""
        return self._ref

    @property
    def file_path(self) -> str | None:
        """Where a FILE's bytes are read from (local or ``/vsi...``); None otherwise."""
        ref = self._ref
        return ref if isinstance(ref, str) else None

    @property
    def tortilla(self) -> Tortilla | None:
        """The children of a FOLDER sample; None for a FILE."""
        ref = self._ref
        return None if ref is None or isinstance(ref, str) else ref

    _path = file_path
    _tortilla = tortilla

    @property
    def size(self) -> int:
        """Size in bytes: the file's, or the sum over a folder's samples."""
        return self._size

    @property
    def is_padding(self) -> bool:
        """True for the ``__TACOPAD__N`` samples ``Tortilla(pad_to=...)`` appends."""
        return self._ref is None

    def _own_state(self) -> _State:
        state = self._state
        if state.shared:
            state = self._state = _State(state.types, state.frozen)
        return state

    @property
    def _types(self) -> FieldMap:
        return self._state.types

    @property
    def _values(self) -> dict[str, Any]:
        return dict(zip(self._types, self._value_list(), strict=True))

    def _value_list(self) -> tuple[Any, ...]:
        return (self._vals,) if len(self._state.types) == 1 else tuple(self._vals)

    def _set_values(self, types: FieldMap, values: tuple[Any, ...]) -> None:
        state = self._state
        if state.shared:
            self._state = _shared_state(types, state.frozen)
        else:
            state.types = types
        self._vals = values[0] if len(values) == 1 else values

    @property
    def _descriptions(self) -> dict[str, str] | None:
        return self._state.descriptions

    @property
    def fields(self) -> tuple[str, ...]:
        """Metadata field names in insertion order."""
        return tuple(self._types)

    @property
    def metadata(self) -> Mapping[str, Any]:
        """Read-only view of the metadata values."""
        return MappingProxyType(self._values)

    @property
    def schema(self) -> pa.Schema:
        """Arrow schema of the metadata fields, in insertion order."""
        return pa.schema(list(self._types.items()))

    @property
    def field_descriptions(self) -> Mapping[str, str]:
        """Descriptions given by extensions, per field."""
        return MappingProxyType(self._descriptions or {})

    def __getitem__(self, field: str) -> Any:
        index = position(self._types, field)
        if index < 0:
            raise TacoNavigationError(
                f"{self._where()} has no field {field!r}; fields: {list(self._types)}"
            )
        return value_at(self, index)

    def get(self, field: str, default: Any = None) -> Any:
        """Value of ``field``, or ``default`` when the sample has no such field."""
        index = position(self._types, field)
        return default if index < 0 else value_at(self, index)

    def __repr__(self) -> str:
        return f"Sample(id={self.id!r}, type={self.type!r}, fields={list(self._types)})"

    def _check_mutable(self) -> None:
        if self._state.frozen:
            raise TacoValidationError(
                f"{self._where()} already belongs to a Tortilla; add or remove metadata "
                "before building the Tortilla (its schema was checked then)"
            )

    def _add_values(
        self,
        values: Mapping[str, Any],
        types: Mapping[str, pa.DataType] | None,
        descriptions: Mapping[str, str] | None = None,
    ) -> None:
        current = self._state.types
        resolved: list[tuple[str, Any, pa.DataType]] = []
        for key, value in values.items():
            if key not in _CHECKED_KEYS:
                check_key(key, self._where())
                if len(_CHECKED_KEYS) < _CHECKED_KEYS_MAX:
                    _CHECKED_KEYS.add(key)
            if key in current:
                raise TacoSchemaError(
                    f"{self._where()}: field {key!r} already exists (type {self._types[key]}); "
                    "pop() it first to replace it"
                )
            if isinstance(value, pa.Scalar):
                resolved.append((key, value.as_py(), value.type))
            elif types is not None:
                resolved.append((key, value, types[key]))
            else:
                try:
                    resolved.append((key, value, infer_type(value)))
                except TacoSchemaError as exc:
                    raise TacoSchemaError(f"{self._where()}, field {key!r}: {exc}") from exc
        if resolved:
            types = dict(current)
            types.update((key, data_type) for key, _, data_type in resolved)
            combined = (*self._value_list(), *(value for _, value, _ in resolved))
            self._set_values(intern_fields(types), combined)
        if descriptions:
            merged = dict(self._descriptions or {})
            merged.update({k: v for k, v in descriptions.items() if k in values})
            self._own_state().descriptions = merged

    def _add_table(self, table: pa.Table, descriptions: Mapping[str, str] | None) -> None:
        if table.num_rows != 1:
            raise TacoSchemaError(
                f"{self._where()}: a table extension must have exactly 1 row, found "
                f"{table.num_rows}"
            )
        names = table.schema.names
        if len(set(names)) != len(names):
            raise TacoSchemaError(f"{self._where()}: table extension repeats columns {names}")
        values = {name: table.column(i)[0].as_py() for i, name in enumerate(names)}
        types = {field.name: field.type for field in table.schema}
        self._add_values(values, types, descriptions)

    def extend_with(self, extension: object, name: str | None = None) -> Sample:
        """Add metadata fields from an extension; returns ``self`` for chaining.

        Args:
            extension: a :class:`~taco_gdal.extensions.SampleExtension`, a ``dict`` (types
                inferred), a one-row ``pyarrow.Table`` (types kept) or a pydantic model.
            name: namespace for a pydantic model's keys without one (default: class name).

        Raises:
            TacoValidationError: invalid key, or the sample is already in a Tortilla.
            TacoSchemaError: a field already exists, or the table is not one row.

        Example:
            >>> s = Sample("a", b"x").extend_with({"split": "train"})
            >>> s["split"]
            'train'
        """
        self._check_mutable()
        # imported here: the extensions package imports pyproj and shapely (slow)
        from taco_gdal.extensions.base import SampleExtension

        if isinstance(extension, SampleExtension):
            table = extension(self)
            self._add_table(table, extension.get_field_descriptions())
        elif isinstance(extension, pa.Table):
            self._add_table(extension, None)
        elif isinstance(extension, Mapping):
            self._add_values(extension, None)
        elif callable(getattr(extension, "model_dump", None)):
            namespace = name or type(extension).__name__.lower()
            dumped: dict[str, Any] = extension.model_dump()  # type: ignore[attr-defined]
            self._add_values(
                {k if ":" in k else f"{namespace}:{k}": v for k, v in dumped.items()}, None
            )
        else:
            raise TacoValidationError(
                f"{self._where()}: extension must be a SampleExtension, dict, one-row "
                f"pyarrow.Table or pydantic model, found {type(extension).__name__}"
            )
        return self

    def pop(self, field: str) -> pa.Table:
        """Remove a metadata field and return it as a one-row table (type kept).

        Raises:
            TacoValidationError: ``field`` is a core field, or the sample is in a Tortilla.
            TacoNavigationError: the sample has no such field.

        Example:
            >>> s = Sample("a", b"x", split="train")
            >>> s.pop("split").to_pylist()
            [{'split': 'train'}]
        """
        if field in _CORE_FIELDS:
            raise TacoValidationError(
                f"{self._where()}: cannot pop core field {field!r} (core fields: id, type, path)"
            )
        self._check_mutable()
        index = position(self._types, field)
        if index < 0:
            raise TacoNavigationError(
                f"{self._where()} has no field {field!r}; fields: {list(self._types)}"
            )
        values = self._value_list()
        value = values[index]
        data_type = self._types[field]
        types = dict(self._types)
        del types[field]
        self._set_values(intern_fields(types), values[:index] + values[index + 1 :])
        if self._descriptions:
            self._descriptions.pop(field, None)
        schema = pa.schema([(field, data_type)])
        return pa.table([column_from_values([value], data_type)], schema=schema)

    def export_metadata(self) -> pa.Table:
        """One row: ``id``, ``type``, ``path`` (null for FOLDER and padding), then the fields.

        Example:
            >>> Sample("a", b"x", k=1).export_metadata().column_names
            ['id', 'type', 'path', 'k']
        """
        fields = [(ID, pa.string()), (TYPE, pa.string()), (PATH, pa.string())]
        arrays = [pa.array([self.id]), pa.array([self.type]), pa.array([self._path], pa.string())]
        for (key, data_type), value in zip(self._types.items(), self._value_list(), strict=True):
            fields.append((key, data_type))
            arrays.append(column_from_values([value], data_type))
        return pa.table(arrays, schema=pa.schema(fields))

    def cleanup(self) -> None:
        """Delete the temporary file made from ``bytes`` data now (idempotent)."""
        finalizer = self._state.finalizer
        if finalizer is not None:
            finalizer()

    def _freeze(self) -> None:
        state = self._state
        if state.frozen:
            return
        if state.shared:
            twin = state.frozen_twin
            if twin is None:
                twin = _shared_state(state.types, True)
                if twin.shared:  # not a sample's own (the cache was full)
                    state.frozen_twin = twin
            self._state = twin
        else:
            state.frozen = True
