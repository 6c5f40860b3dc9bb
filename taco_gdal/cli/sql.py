"""``taco sql PATH QUERY``: a DuckDB query over ``data`` (level 0) and ``level0`` .. ``levelN``."""

from __future__ import annotations

import click

from taco_gdal.cli._options import Common, verb
from taco_gdal.cli._output import RowFormat, row_output_options, write_rows

__all__ = ["command"]


@verb(
    "sql",
    examples=[
        'taco sql dataset.tacozip "SELECT split, count(*) AS n FROM data GROUP BY split"',
        'taco sql dataset.tacozip \'SELECT c.id, c."internal:gdal_vsi" FROM level1 c '
        'JOIN level0 p ON c."internal:parent_id" = p."internal:current_id" '
        "WHERE p.id = ''tile_3''' -f csv",
        'taco sql dataset.tacozip "SELECT * FROM data" -f parquet -o level0.parquet',
    ],
)
@click.argument("path")
@click.argument("query")
@row_output_options
def sql(common: Common, path: str, query: str, fmt: RowFormat, output: str | None) -> None:
    """Run QUERY (DuckDB SQL) over the tables data, level0, level1, ...

    Join a level to its parents with child."internal:parent_id" =
    parent."internal:current_id".  Quote column names holding ':' with "...".
    """
    from taco_gdal.read.load import load

    with load(path) as ds:
        table = ds.sql(query).to_arrow(0)
    write_rows(table, "json" if common.json else fmt, output, {"path": ds.path, "query": query})


command = sql
