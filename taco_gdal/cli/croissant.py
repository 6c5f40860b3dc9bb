"""``taco croissant PATH OUT``: Croissant 1.1 JSON-LD describing a TACO ZIP or FOLDER."""

from __future__ import annotations

import json
import os

import click

from taco_gdal.cli._options import Common, verb
from taco_gdal.cli._output import emit_json

__all__ = ["command"]


@verb(
    "croissant",
    writes=True,
    paths=("path", "output"),
    examples=[
        "taco croissant dataset.tacozip dataset.croissant.json",
        "taco croissant dataset/ croissant.json --validate",
    ],
)
@click.argument("path")
@click.argument("output")
@click.option(
    "--validate", is_flag=True, help="Check the written file with mlcroissant (croissant extra)."
)
def croissant(common: Common, path: str, output: str, validate: bool) -> None:
    """Write Croissant metadata for PATH to OUTPUT (local paths relative to OUTPUT's folder).

    The container is a FileObject with its SHA-256, each level table a RecordSet
    typed from its Parquet schema; extent and CRS as GeoCroissant properties.
    """
    from taco_gdal.errors import TacoExistsError, TacoValidationError
    from taco_gdal.read.interop.croissant import require_mlcroissant
    from taco_gdal.read.load import load

    if os.path.exists(output) and not common.overwrite:
        raise TacoExistsError(f"{output}: expected a new file, found one (use --overwrite)")
    mlcroissant = require_mlcroissant() if validate else None
    folder = os.path.dirname(os.path.abspath(output))
    with load(path) as ds:
        doc = ds.to_croissant(relative_to=folder)
    with open(output, "w", encoding="utf-8") as out:
        json.dump(doc, out, indent=2)
    if mlcroissant is not None:
        try:
            mlcroissant.Dataset(jsonld=output)
        except mlcroissant.ValidationError as exc:
            raise TacoValidationError(f"{output}: mlcroissant rejects it: {exc}") from exc
    if common.json:
        emit_json({"written": [output]})
    else:
        click.echo(output)


command = croissant
