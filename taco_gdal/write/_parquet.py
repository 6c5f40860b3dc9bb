"""Parquet settings of every table a writer produces, and serialisation to bytes.

Defaults follow the reference writer (zstd, statistics, content-defined chunking
for page reuse on deduplicating storage); small ``__meta__`` tables skip what
only slows them down. ``create()``'s parquet keyword arguments override them.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from taco_gdal._memory import release_memory
from taco_gdal.errors import TacoValidationError
from taco_gdal.format.names import CHECKSUM
from taco_gdal.model._arrow import from_numpy
from taco_gdal.write._tables import Rebuilt

__all__ = [
    "LEVEL_OPTIONS",
    "LOCAL_META_OPTIONS",
    "SMALL_META_OPTIONS",
    "SMALL_META_ROWS",
    "TACOCAT_OPTIONS",
    "MetaOptions",
    "local_meta_options",
    "parquet_bytes",
    "parquet_file",
    "parquet_options",
    "parquet_view",
    "supports_cdc",
]

CDC_OPTION: Final = "use_content_defined_chunking"

LOCAL_META_OPTIONS: Final[Mapping[str, Any]] = {
    "compression": "zstd",
    "write_statistics": True,
    # dictionaries and CDC buy nothing on a handful of rows and cost half the time
    "use_dictionary": False,
}
SMALL_META_ROWS: Final = 32
SMALL_META_OPTIONS: Final[Mapping[str, Any]] = {
    # zstd saves almost nothing on a few rows; nobody filters a __meta__ by statistics
    "compression": "none",
    "write_statistics": False,
    "use_dictionary": False,
}
LEVEL_OPTIONS: Final[Mapping[str, Any]] = {
    "compression": "zstd",
    "write_statistics": True,
    CDC_OPTION: True,
    "compression_level": 13,
    "row_group_size": 65_536,
}
TACOCAT_OPTIONS: Final[Mapping[str, Any]] = {**LEVEL_OPTIONS, "compression_level": 19}

_IGNORED: Final = frozenset({"mode"})


@dataclass(frozen=True)
class MetaOptions:
    """Parquet options of ``__meta__`` tables: one set for small tables, one for the others."""

    small: Mapping[str, Any]
    large: Mapping[str, Any]

    def for_rows(self, rows: int) -> Mapping[str, Any]:
        """The options of a ``__meta__`` table of ``rows`` rows."""
        return self.small if rows < SMALL_META_ROWS else self.large


def local_meta_options(overrides: Mapping[str, Any] | None = None) -> MetaOptions:
    """:class:`MetaOptions` with the caller's ``**parquet_kwargs`` applied to both sets."""
    return MetaOptions(
        parquet_options(SMALL_META_OPTIONS, overrides),
        parquet_options(LOCAL_META_OPTIONS, overrides),
    )


@functools.cache
def _write_table_parameters() -> frozenset[str]:
    return frozenset(inspect.signature(pq.write_table).parameters)


@functools.cache
def supports_cdc() -> bool:
    """True when ``pq.write_table`` of the installed pyarrow accepts CDC."""
    return CDC_OPTION in _write_table_parameters()


def parquet_options(
    defaults: Mapping[str, Any], overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Defaults merged with ``**parquet_kwargs``; an unknown key raises TacoValidationError."""
    given = {k: v for k, v in (overrides or {}).items() if k not in _IGNORED}
    merged = dict(defaults)
    if "compression" in given and "compression_level" not in given:
        merged.pop("compression_level", None)  # the default level belongs to zstd
    merged.update(given)
    if not supports_cdc():
        merged.pop(CDC_OPTION, None)
    known = _write_table_parameters()
    unknown = sorted(k for k in merged if k not in known)
    if unknown:
        raise TacoValidationError(
            f"unknown parquet option(s) {unknown}: expected keywords of pyarrow.parquet."
            f"write_table such as compression, compression_level, row_group_size"
        )
    try:
        probe = from_numpy(np.ones(1, dtype=np.int64))  # pa.table({...}) imports pandas
        parquet_bytes(pa.Table.from_arrays([probe], names=["probe"]), merged)
    except (pa.ArrowException, TypeError, ValueError) as exc:
        raise TacoValidationError(f"invalid parquet options {given}: {exc}") from exc
    return merged


def parquet_bytes(table: pa.Table, options: Mapping[str, Any]) -> bytes:
    """Serialise ``table`` to a parquet file held in memory."""
    return bytes(parquet_view(table, options))


def parquet_view(table: pa.Table, options: Mapping[str, Any]) -> memoryview:
    """:func:`parquet_bytes` as a view of Arrow's buffer (no copy)."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, **_digest_column_options(table, options))
    return memoryview(sink.getvalue())


def parquet_file(
    table: pa.Table, path: str, options: Mapping[str, Any], rebuilt: Rebuilt | None = None
) -> None:
    """:func:`parquet_bytes` written to the file ``path`` instead of memory (same bytes).

    Row groups are written one at a time, memory released between them; with
    ``rebuilt``, each row group gets its missing columns just before it is written.
    """
    schema = table.schema if rebuilt is None else rebuilt.schema
    settings = dict(_digest_column_options(pa.Table.from_batches([], schema=schema), options))
    asked = settings.pop("row_group_size", None)
    rows = min(_MAX_ROW_GROUP, asked or _DEFAULT_ROW_GROUP)

    def part(start: int, n: int) -> pa.Table:
        piece = table.slice(start, n)
        return piece if rebuilt is None else rebuilt.complete(piece, start)

    with pq.ParquetWriter(path, schema, **settings) as writer:
        if table.num_rows <= rows:
            writer.write_table(part(0, table.num_rows), row_group_size=asked)
            return
        for start in range(0, table.num_rows, rows):
            writer.write_table(part(start, rows), row_group_size=rows)
            release_memory()


_DEFAULT_ROW_GROUP: Final = 1024 * 1024
"""Rows per row group of ``pq.write_table`` when none is given."""
_MAX_ROW_GROUP: Final = 64 * 1024 * 1024
"""The most rows per row group the Parquet writer accepts (larger sizes are cut to this)."""


DIGEST_LEVEL: Final = 1
"""zstd level of the ``taco_gdal:checksum`` column: hex digests are random, so a higher
level only costs time.  The column is not dictionary-encoded (every digest is distinct)
and has no statistics (no reader prunes row groups by digest)."""


def _leaf_paths(schema: pa.Schema) -> list[str]:
    """The Parquet leaf column paths of ``schema``."""
    if not any(pa.types.is_nested(field.type) for field in schema):
        return list(schema.names)
    empty = pa.BufferOutputStream()
    pq.write_table(schema.empty_table(), empty)
    leaves = pq.ParquetFile(pa.BufferReader(empty.getvalue())).schema
    return [leaves.column(i).path for i in range(len(leaves))]


def _digest_column_options(table: pa.Table, options: Mapping[str, Any]) -> Mapping[str, Any]:
    """``options`` with the digest column at :data:`DIGEST_LEVEL`, without dictionary or statistics.

    pyarrow takes these per column or per leaf path, so every leaf gets the setting
    asked. Unchanged without the column, or unless zstd at an int level above it.
    """
    if CHECKSUM not in table.column_names:
        return options
    paths = _leaf_paths(table.schema)
    settings = dict(options)
    for key in ("use_dictionary", "write_statistics"):
        given = options.get(key, True)
        if given is True or isinstance(given, list | tuple):
            settings[key] = [
                path for path in (paths if given is True else given) if path != CHECKSUM
            ]
    level = options.get("compression_level")
    if options.get("compression") == "zstd" and isinstance(level, int) and level > DIGEST_LEVEL:
        levels = {path: level for path in paths}
        levels[CHECKSUM] = DIGEST_LEVEL
        settings["compression_level"] = levels
    return settings
