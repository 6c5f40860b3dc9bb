"""``Taco``: the root Tortilla plus dataset-level metadata (spec 5.4, 5.5.2, 7.1.1)."""

from __future__ import annotations

import copy
import json
import weakref
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import pyarrow as pa

from taco_gdal.errors import TacoNavigationError, TacoValidationError
from taco_gdal.format.names import FIELD_SCHEMA_KEY, PIT_SCHEMA_KEY, TACO_VERSION
from taco_gdal.model._collection_rules import (
    check_dataset_id,
    check_licenses,
    check_string_list,
    check_tasks,
    check_text,
    check_title,
)
from taco_gdal.model._columns import ColumnSamples
from taco_gdal.model._levels import Level, build_tables, walk
from taco_gdal.model._rules import KEY_PATTERN
from taco_gdal.model.collection import CORE_KEYS, field_schema, order_collection
from taco_gdal.model.contacts import Curator, Provider, contact_list
from taco_gdal.model.extent import Extent, compute_extent
from taco_gdal.model.package import MetadataPackage
from taco_gdal.model.pit import check_pit1, check_pit2, pit_schema
from taco_gdal.model.tortilla import Tortilla

__all__ = ["Taco"]

_RESERVED = frozenset({*CORE_KEYS, PIT_SCHEMA_KEY, FIELD_SCHEMA_KEY, "tortilla"})


class Taco:
    """A whole dataset: one root :class:`Tortilla` and its COLLECTION metadata.

    Building a Taco checks the PIT rules and computes the extent from
    ``stac:``/``istac:`` centroid and time columns unless given.

    Args:
        id: lowercase letters, digits, ``_`` and ``-``.
        dataset_version: version of the data, e.g. ``"1.0.0"``.
        licenses: SPDX identifiers or expressions (``"CC-BY-4.0"``,
            ``"Apache-2.0 OR MIT"``), or ``"proprietary"``/``"other"``.
        providers: :class:`Provider` objects or dicts.
        tasks: names from :data:`taco_gdal.model.TASKS`.
        title: at most 250 characters.
        curators: :class:`Curator` objects or dicts.
        extent: an :class:`Extent` or ``{"spatial": [...], "temporal": [...]}``.
        **extra: further top-level COLLECTION keys (JSON values).

    Raises:
        TacoValidationError: a collection field breaks its rule.
        TacoPITError: the hierarchy is not a Position-Invariant Tree (PIT-1).
        TacoSchemaError: two samples of one level have different schemas (PIT-2).

    Example:
        >>> from taco_gdal.model import Sample, Tortilla
        >>> t = Tortilla([Sample("a", b"1"), Sample("b", b"2")])
        >>> taco = Taco(t, id="demo", dataset_version="1.0", description="d",
        ...             licenses=["MIT"], providers=[{"name": "me"}], tasks=["other"])
        >>> taco.metadata().levels[0].column_names
        ['id', 'type', 'internal:current_id', 'internal:parent_id', 'path']
    """

    def __init__(
        self,
        tortilla: Tortilla,
        id: str,
        dataset_version: str,
        description: str,
        licenses: Sequence[str],
        providers: Sequence[Provider | Mapping[str, Any]],
        tasks: Sequence[str],
        taco_version: str = TACO_VERSION,
        title: str | None = None,
        curators: Sequence[Curator | Mapping[str, Any]] | None = None,
        keywords: Sequence[str] | None = None,
        extent: Extent | Mapping[str, Any] | None = None,
        **extra: Any,
    ) -> None:
        if not isinstance(tortilla, Tortilla):
            raise TacoValidationError(
                f"Taco: tortilla must be a Tortilla, found {type(tortilla).__name__}"
            )
        self._core: dict[str, Any] = {
            "id": check_dataset_id(id),
            "dataset_version": check_text("dataset_version", dataset_version),
            "description": check_text("description", description),
            "licenses": check_licenses(licenses),
            "providers": contact_list("providers", providers, Provider),
            "tasks": check_tasks(tasks),
            "taco_version": check_text("taco_version", taco_version),
            "title": check_title(title),
            "curators": None if curators is None else contact_list("curators", curators, Curator),
            "keywords": None if keywords is None else check_string_list("keywords", keywords),
        }
        self._extras: dict[str, Any] = {}
        self._descriptions: dict[str, str] = {}
        self._collection: dict[str, Any] | None = None
        self._add_keys(extra, "Taco(**extra)")
        tortilla._freeze()
        self.tortilla = tortilla
        check_pit1(tortilla)
        levels = walk(tortilla)
        check_pit2(levels)
        self._level_types = [level.types for level in levels]
        """Each level's PIT-2 columns; the levels themselves are walked again, not kept."""
        self._extent = Extent.from_value(extent) if extent is not None else compute_extent(levels)
        del levels
        self._tables: list[weakref.ref[pa.Table]] = []
        """The level tables last built, weakly: alive while a writer uses them."""

    @property
    def id(self) -> str:
        """The dataset id."""
        return str(self._core["id"])

    @property
    def extent(self) -> Extent:
        """Given or computed spatial/temporal extent."""
        return self._extent

    @property
    def depth(self) -> int:
        """Index of the deepest level."""
        return len(self._level_types) - 1

    def _levels(self) -> list[Level]:
        levels = walk(self.tortilla)
        for level, types in zip(levels, self._level_types, strict=True):
            level.types = types
        return levels

    @property
    def extra(self) -> Mapping[str, Any]:
        """Top-level keys added by ``**extra`` and :meth:`extend_with`, in order."""
        return dict(self._extras)

    def __getitem__(self, key: str) -> Any:
        """A COLLECTION value (core or extra) without building the level tables."""
        if key == "extent":
            return self._extent.to_dict()
        if key in self._core:
            return copy.deepcopy(self._core[key])
        if key in self._extras:
            return copy.deepcopy(self._extras[key])
        raise TacoNavigationError(f"Taco {self.id!r} has no collection key {key!r}")

    def extend_with(self, extension: object) -> Taco:
        """Add top-level COLLECTION keys; returns ``self`` for chaining.

        Args:
            extension: a :class:`~taco_gdal.extensions.TacoExtension`, a ``dict``,
                a one-row ``pyarrow.Table`` or a pydantic model (``model_dump()``).

        Raises:
            TacoValidationError: a key is malformed, reserved or already present, or
                a value is not JSON-serialisable.
        """
        # imported here: the extensions package imports pyproj and shapely (slow)
        from taco_gdal.extensions.base import TacoExtension

        if isinstance(extension, TacoExtension):
            row = _one_row(extension(self), type(extension).__name__)
            self._add_keys(row, type(extension).__name__)
            self._descriptions.update(extension.get_field_descriptions())
        elif isinstance(extension, pa.Table):
            self._add_keys(_one_row(extension, "table extension"), "table extension")
        elif isinstance(extension, Mapping):
            self._add_keys(extension, "dict extension")
        elif callable(getattr(extension, "model_dump", None)):
            dumped: dict[str, Any] = extension.model_dump()  # type: ignore[attr-defined]
            self._add_keys(dumped, type(extension).__name__)
        else:
            raise TacoValidationError(
                "Taco.extend_with: expected a TacoExtension, dict, one-row pyarrow.Table or "
                f"pydantic model, found {type(extension).__name__}"
            )
        return self

    def _add_keys(self, values: Mapping[str, Any], where: str) -> None:
        converted: dict[str, Any] = {}
        for key, value in values.items():
            if not isinstance(key, str) or KEY_PATTERN.match(key) is None:
                raise TacoValidationError(
                    f"{where}: collection key {key!r} is not valid; expected alphanumeric and "
                    "'_', optionally with one 'namespace:' prefix"
                )
            if key in _RESERVED:
                raise TacoValidationError(
                    f"{where}: collection key {key!r} is reserved (core field or taco: schema)"
                )
            if key in self._extras:
                raise TacoValidationError(f"{where}: collection key {key!r} already exists")
            converted[key] = _jsonable(value, f"{where}, key {key!r}")
        self._extras.update(converted)
        self._collection = None

    def metadata(self) -> MetadataPackage:
        """Level tables and the COLLECTION dict, ready for a writer.

        Example:
            >>> from taco_gdal.model import Sample, Tortilla
            >>> taco = Taco(Tortilla([Sample("a", b"1")]), id="x", dataset_version="1",
            ...             description="d", licenses=["MIT"], providers=[{"name": "n"}],
            ...             tasks=["other"])
            >>> list(taco.metadata().collection)[-2:]
            ['taco:pit_schema', 'taco:field_schema']
        """
        levels = self._levels()
        tables = self._cached_tables()
        if tables is None:
            tables = build_tables(levels)
            self._tables = [weakref.ref(table) for table in tables]
        core = copy.deepcopy(self._core)
        core["extent"] = self._extent.to_dict()
        collection = order_collection(
            core,
            copy.deepcopy(self._extras),
            pit_schema(tables),
            field_schema(tables, self._field_descriptions(levels)),
        )
        self._collection = copy.deepcopy(collection)
        sizes = [level.file_sizes() for level in levels]
        return MetadataPackage(levels=list(tables), collection=collection, file_sizes=sizes)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_tables"] = []  # weak references do not pickle; tables are rebuilt on demand
        return state

    def _cached_tables(self) -> list[pa.Table] | None:
        tables = [ref() for ref in self._tables]
        if not tables or any(table is None for table in tables):
            return None
        return [table for table in tables if table is not None]

    @property
    def collection(self) -> dict[str, Any]:
        """The COLLECTION.json content (same as ``metadata().collection``)."""
        if self._collection is None:
            return self.metadata().collection
        return copy.deepcopy(self._collection)

    @staticmethod
    def _field_descriptions(levels: list[Level]) -> dict[str, str]:
        found: dict[str, str] = {}
        for level in levels:
            for group in level.groups:
                if group._descriptions:
                    found.update(group._descriptions)
        for level in levels:
            if isinstance(level.samples, ColumnSamples):
                continue  # samples given as columns have no descriptions
            for sample in level.samples:
                if sample._descriptions:
                    found.update(sample._descriptions)
        return found


def _one_row(table: pa.Table, where: str) -> dict[str, Any]:
    if table.num_rows != 1:
        raise TacoValidationError(f"{where}: expected a one-row table, found {table.num_rows} rows")
    return dict(table.to_pylist()[0])


def _jsonable(value: Any, where: str) -> Any:
    """``value`` with datetimes as ISO strings and tuples as lists; raises if not JSON."""
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v, where) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v, where) for v in value]
    if hasattr(value, "model_dump") and callable(value.model_dump):
        return _jsonable(value.model_dump(), where)
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TacoValidationError(
            f"{where}: expected a JSON value, found {type(value).__name__} {value!r}: {exc}"
        ) from exc
    return value
