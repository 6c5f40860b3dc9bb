"""Base classes of metadata extensions (spec 7.1.2).

An extension declares an Arrow schema (``get_schema``) and computes rows
(``_compute``) for a sample, a tortilla or a dataset. Calling it checks the rows
against the schema, so a wrong type is caught where it is made; with
``schema_only=True`` typed nulls come back instead.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, TypeVar

import pyarrow as pa

from taco_gdal.errors import TacoSchemaError, TacoValidationError

if TYPE_CHECKING:
    from taco_gdal.model.sample import Sample
    from taco_gdal.model.taco import Taco
    from taco_gdal.model.tortilla import Tortilla

__all__ = ["Extension", "SampleExtension", "TacoExtension", "TortillaExtension", "coerce_items"]

T = TypeVar("T")


def coerce_items(items: Iterable[object], kind: type[T], where: str) -> tuple[T, ...]:
    """``items`` as ``kind`` instances: kept as they are, or built from a dict of arguments."""
    coerced = []
    for position, item in enumerate(items):
        if isinstance(item, kind):
            coerced.append(item)
        elif isinstance(item, Mapping):
            try:
                coerced.append(kind(**item))
            except TypeError as exc:
                raise TacoValidationError(f"{where}[{position}]: {exc}") from exc
        else:
            raise TacoValidationError(
                f"{where}[{position}]: expected a {kind.__name__} or dict, found {item!r}"
            )
    return tuple(coerced)


class Extension(ABC):
    """What every extension has: a schema, descriptions, the schema-only switch."""

    schema_only: bool = False
    """When true, ``_compute`` is skipped and every field is a typed null."""

    @abstractmethod
    def get_schema(self) -> dict[str, pa.DataType]:
        """Field names and Arrow types this extension produces, in column order."""

    def get_field_descriptions(self) -> dict[str, str]:
        """Human-readable description per field (COLLECTION ``taco:field_schema``)."""
        return {}

    def arrow_schema(self) -> pa.Schema:
        """``get_schema()`` as a ``pa.Schema``."""
        return pa.schema(list(self.get_schema().items()))

    def null_table(self, rows: int) -> pa.Table:
        """``rows`` rows of typed nulls with this extension's schema."""
        schema = self.arrow_schema()
        return pa.table([pa.nulls(rows, type=f.type) for f in schema], schema=schema)

    def checked(self, table: pa.Table, rows: int) -> pa.Table:
        """``table`` if it has ``rows`` rows and the declared schema (after a safe cast)."""
        name = type(self).__name__
        if not isinstance(table, pa.Table):
            raise TacoSchemaError(
                f"extension {name}: _compute must return a pyarrow.Table, "
                f"found {type(table).__name__}"
            )
        if table.num_rows != rows:
            raise TacoSchemaError(
                f"extension {name}: expected {rows} row(s), _compute returned {table.num_rows}"
            )
        schema = self.arrow_schema()
        if table.schema.names != schema.names:
            raise TacoSchemaError(
                f"extension {name}: expected columns {schema.names}, "
                f"_compute returned {table.schema.names}"
            )
        if not table.schema.equals(schema):
            try:
                table = table.cast(schema)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
                raise TacoSchemaError(
                    f"extension {name}: expected types {schema}, _compute returned "
                    f"{table.schema} which does not cast safely: {exc}"
                ) from exc
        return table


class SampleExtension(Extension):
    """Adds fields to one sample, computed from that sample (e.g. from its file).

    Example:
        >>> import pyarrow as pa
        >>> class Cloud(SampleExtension):
        ...     def get_schema(self):
        ...         return {"cloud_cover": pa.float32()}
        ...     def _compute(self, sample):
        ...         return pa.table({"cloud_cover": pa.array([0.5], pa.float32())})
    """

    @abstractmethod
    def _compute(self, sample: Sample) -> pa.Table:
        """One row with the declared schema."""

    def __call__(self, sample: Sample) -> pa.Table:
        """The extension's row for ``sample``, checked against ``get_schema()``."""
        if self.schema_only:
            return self.null_table(1)
        return self.checked(self._compute(sample), 1)


class TortillaExtension(Extension):
    """Adds columns to a tortilla, computed over all its samples at once (e.g. a grid code)."""

    @abstractmethod
    def _compute(self, tortilla: Tortilla) -> pa.Table:
        """One row per sample of ``tortilla`` (padding included), in sample order."""

    def __call__(self, tortilla: Tortilla) -> pa.Table:
        """The extension's rows for ``tortilla``, checked against ``get_schema()``."""
        if self.schema_only:
            return self.null_table(len(tortilla))
        return self.checked(self._compute(tortilla), len(tortilla))


class TacoExtension(Extension):
    """Adds top-level keys to COLLECTION.json, computed from the whole dataset."""

    @abstractmethod
    def _compute(self, taco: Taco) -> pa.Table:
        """One row; each column becomes a COLLECTION.json key."""

    def __call__(self, taco: Taco) -> pa.Table:
        """The extension's row for ``taco``, checked against ``get_schema()``."""
        if self.schema_only:
            return self.null_table(1)
        return self.checked(self._compute(taco), 1)
