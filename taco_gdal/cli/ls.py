"""``taco ls PATH``: samples of one level (after the shared selection) with their GDAL paths."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from taco_gdal.cli._options import Common, verb
from taco_gdal.cli._output import RowFormat, row_output_options, write_rows
from taco_gdal.cli._select import load_selected, selection_options

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["command", "pick_columns"]


def pick_columns(table: pa.Table, spec: str | None, where: str) -> pa.Table:
    """The columns ``--columns`` asks for (default ``id,type,internal:gdal_vsi``).

    Example:
        >>> import pyarrow as pa
        >>> t = pa.table({"id": ["a"], "type": ["FILE"], "internal:gdal_vsi": ["/x"], "n": [1]})
        >>> pick_columns(t, None, "level0").column_names
        ['id', 'type', 'internal:gdal_vsi']
        >>> pick_columns(t, "id,n", "level0").column_names
        ['id', 'n']
    """
    from taco_gdal.errors import TacoQueryError
    from taco_gdal.format.names import GDAL_VSI, ID, TYPE

    if spec is not None and spec.strip().lower() == "all":
        return table
    wanted = [ID, TYPE, GDAL_VSI] if spec is None else [c.strip() for c in spec.split(",")]
    missing = [c for c in wanted if c and c not in table.column_names]
    if missing:
        raise TacoQueryError(
            f"--columns: expected columns of {where}, found unknown {missing}; "
            f"available: {', '.join(table.column_names)}"
        )
    return table.select([c for c in wanted if c])


@verb(
    "ls",
    examples=[
        "taco ls dataset.tacozip",
        "taco ls dataset.tacozip --level 1 --columns id,internal:gdal_vsi --format csv",
        "taco ls dataset.tacozip --bbox -4,40,-3,41 --datetime 2023-01-01/2023-06-30",
        "taco ls dataset.tacozip --where \"split = 'train'\" -f parquet -o train.parquet",
    ],
)
@click.argument("path")
@selection_options
@click.option("--columns", metavar="A,B,...|all", help="Columns to print [id,type,gdal path].")
@row_output_options
def ls(
    common: Common,
    path: str,
    level: int,
    where: str | None,
    bbox: str | None,
    datetime_: str | None,
    columns: str | None,
    fmt: RowFormat,
    output: str | None,
) -> None:
    """List the samples of a level with their GDAL paths.

    The GDAL path (internal:gdal_vsi) opens with gdalinfo, rasterio or QGIS as it is.
    """
    ds, selection = load_selected(path, level, where, bbox, datetime_)
    with ds:
        table = pick_columns(selection.rows(ds), columns, f"level{level} of {ds.path}")
    envelope: dict[str, Any] = {"path": ds.path, "level": level}
    write_rows(table, "json" if common.json else fmt, output, envelope)


command = ls
