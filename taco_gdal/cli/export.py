"""``taco export PATH OUT``: samples that pass the filters, with their subtrees, as a new dataset.

Sample bytes are copied, never re-encoded (:func:`taco_gdal.export`).
"""

from __future__ import annotations

import click

from taco_gdal.cli._options import Common, checksum_option, verb
from taco_gdal.cli._output import emit_json
from taco_gdal.cli._select import load_at_level, selection_options

__all__ = ["command"]


@verb(
    "export",
    writes=True,
    paths=("path", "output"),
    examples=[
        "taco export dataset.tacozip iberia.tacozip --bbox -10,35,5,44",
        "taco export dataset.tacozip train/ --where \"split = 'train'\" --format folder",
        "taco export dataset.tacozip summer.tacozip --level 1 --datetime 2023-06-01/2023-08-31",
    ],
)
@click.argument("path")
@click.argument("output")
@selection_options
@click.option("-f", "--format", "fmt", type=click.Choice(["auto", "zip", "folder"]), default="auto")
@checksum_option
def export(
    common: Common,
    path: str,
    output: str,
    level: int,
    where: str | None,
    bbox: str | None,
    datetime_: str | None,
    fmt: str,
    checksum: str | None,
) -> None:
    """Write the level-0 samples that pass the filters (whole subtrees) to OUTPUT.

    --where filters level-0 samples.  --bbox and --datetime apply at --level N:
    a level-0 sample is kept when one of its descendants at level N passes,
    and its whole subtree is written.
    """
    from taco_gdal.write import export as write_export

    ds = load_at_level(path, level, where, bbox, datetime_)
    with ds:
        written = write_export(
            ds,
            output,
            output_format=fmt,  # type: ignore[arg-type]
            overwrite=common.overwrite,
            quiet=not common.progress,
            checksum=checksum,
        )
        count = ds.to_arrow(0).num_rows
    if common.json:
        emit_json({"written": [str(written)], "samples": count})
    else:
        click.echo(str(written))


command = export
