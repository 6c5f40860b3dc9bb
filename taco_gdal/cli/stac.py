"""``taco stac DATASET OUT``: the selected samples as STAC Items (JSON, NDJSON, stac-geoparquet)."""

from __future__ import annotations

from pathlib import Path

import click

from taco_gdal.cli._options import Common, verb
from taco_gdal.cli._output import emit_json
from taco_gdal.cli._select import load_at_level, selection_options

__all__ = ["command"]


@verb(
    "stac",
    writes=True,
    paths=("path", "output"),
    examples=[
        "taco stac dataset.tacozip items.parquet",
        "taco stac dataset.tacozip items.ndjson --bbox -4,40,-3,41 --datetime 2023-01-01/..",
        "taco stac https://host/dataset.tacozip items.json --href url",
        "taco stac tiles.tacozip bands.ndjson --level 1",
    ],
)
@click.argument("path")
@click.argument("output", type=click.Path(dir_okay=False, path_type=Path))
@selection_options
@click.option(
    "--href",
    type=click.Choice(["gdal", "url"]),
    default="gdal",
    help="Asset hrefs: GDAL paths, or the container URL with archive:start/end byte ranges.",
)
def stac(
    common: Common,
    path: str,
    output: Path,
    level: int,
    where: str | None,
    bbox: str | None,
    datetime_: str | None,
    href: str,
) -> None:
    """Write one STAC Item per selected sample of PATH at --level to OUTPUT.

    OUTPUT ends in .json (ItemCollection), .ndjson (one Item per line) or
    .parquet (stac-geoparquet).  --where applies to level-0 samples; --bbox and
    --datetime at --level.  Needs the stac extra: pip install 'taco_gdal[stac]'.
    """
    from taco_gdal.errors import TacoExistsError
    from taco_gdal.read.interop.stac_files import write_stac

    if output.exists() and not common.overwrite:
        raise TacoExistsError(f"{output}: expected a new output, found an existing file")
    ds = load_at_level(path, level, where, bbox, datetime_)
    with ds:
        written, count = write_stac(ds.state, output, level, href)  # type: ignore[arg-type]
    if common.json:
        emit_json({"written": [str(written)], "samples": count})
    else:
        click.echo(str(written))


command = stac
