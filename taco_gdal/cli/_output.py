"""How verbs print: JSON documents and Arrow rows as table, CSV, JSON lines, JSON or Parquet.

Values become JSON-able the same way everywhere: times as ISO 8601 strings,
WKB geometry columns as WKT, other bytes as hex, lists and dicts recursively.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Mapping
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import IO, TYPE_CHECKING, Any, Final, Literal

import click

from taco_gdal.format.names import GEOMETRY_COLUMNS

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "ROW_FORMATS",
    "RowFormat",
    "emit_json",
    "json_value",
    "row_output_options",
    "write_rows",
]

RowFormat = Literal["table", "csv", "jsonl", "json", "parquet"]
ROW_FORMATS: Final = ("table", "csv", "jsonl", "json", "parquet")
_CELL: Final = 60


def row_output_options(command: Any) -> Any:
    """``-f/--format`` and ``-o/--output``: how a verb that prints rows writes them."""
    command = click.option(
        "-o", "--output", type=click.Path(dir_okay=False), help="Write to FILE."
    )(command)
    return click.option(
        "-f",
        "--format",
        "fmt",
        type=click.Choice(ROW_FORMATS),
        default="table",
        help="Output format (--json is the same as --format json).",
    )(command)


def json_value(value: Any, column: str | None = None) -> Any:
    """``value`` as JSON-able data (WKB in a geometry column becomes WKT).

    Example:
        >>> from datetime import datetime
        >>> json_value({"t": datetime(2023, 1, 2, 3, 4), "b": b"\\x01"})
        {'t': '2023-01-02T03:04:00', 'b': '01'}
    """
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else None
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, bytes):
        if column in GEOMETRY_COLUMNS:
            import shapely

            return shapely.from_wkb(value).wkt
        return value.hex()
    if isinstance(value, Mapping):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_value(v) for v in value]
    if hasattr(value, "item"):  # numpy scalar
        return json_value(value.item(), column)
    return str(value)


def emit_json(document: Any, out: IO[str] | None = None) -> None:
    """Print ``document`` as indented JSON (to stdout by default)."""
    text = json.dumps(json_value(document), indent=2, ensure_ascii=False)
    click.echo(text, file=out)


def _records(table: pa.Table) -> list[dict[str, Any]]:
    return [
        {name: json_value(value, name) for name, value in row.items()} for row in table.to_pylist()
    ]


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    if isinstance(value, list | dict):
        text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _CELL or "/vsi" in text else text[: _CELL - 3] + "..."


def _table_text(records: list[dict[str, Any]], columns: list[str]) -> str:
    cells = [[_cell(r[c]) for c in columns] for r in records]
    widths = [max([len(c), *(len(row[i]) for row in cells)]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += [
        "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    return "\n".join(lines)


def write_rows(
    table: pa.Table,
    fmt: RowFormat,
    output: str | None = None,
    envelope: Mapping[str, Any] | None = None,
) -> None:
    """Print (or write to ``output``) the rows of ``table`` in ``fmt``.

    ``json`` is one document: ``envelope`` plus ``count``, ``columns`` and ``rows``;
    ``parquet`` to a terminal raises click.UsageError.

    Example:
        >>> import pyarrow as pa
        >>> write_rows(pa.table({"id": ["a"], "n": [1]}), "csv")
        id,n
        a,1
    """
    if fmt == "parquet":
        _write_parquet(table, output)
        return
    records = _records(table)
    buffer = io.StringIO()
    if fmt == "json":
        document = {**(envelope or {}), "count": len(records), "columns": table.column_names}
        document["rows"] = records
        buffer.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    elif fmt == "jsonl":
        for record in records:
            buffer.write(json.dumps(record, ensure_ascii=False) + "\n")
    elif fmt == "csv":
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(table.column_names)
        for record in records:
            writer.writerow(
                [json.dumps(v) if isinstance(v, list | dict) else v for v in record.values()]
            )
    else:
        buffer.write(_table_text(records, table.column_names) + "\n")
    if output is None:
        click.echo(buffer.getvalue(), nl=False)
    else:
        with open(output, "w", encoding="utf-8") as f:
            f.write(buffer.getvalue())


def _write_parquet(table: pa.Table, output: str | None) -> None:
    import pyarrow.parquet as pq

    if output is not None:
        pq.write_table(table, output)
        return
    if sys.stdout.isatty():
        raise click.UsageError("Parquet is binary: give -o/--output FILE or redirect stdout")
    sink = io.BytesIO()
    pq.write_table(table, sink)
    sys.stdout.flush()
    sys.stdout.buffer.write(sink.getvalue())
    sys.stdout.buffer.flush()
