"""``taco cat PARTS... OUT``: consolidate TACO ZIP parts into a TACOCAT (``create_tacocat``)."""

from __future__ import annotations

import click

from taco_gdal.cli._options import Common, verb
from taco_gdal.cli._output import emit_json

__all__ = ["command"]


@verb(
    "cat",
    writes=True,
    paths=("parts", "output"),
    examples=[
        "taco cat data_part0001.tacozip data_part0002.tacozip .",
        "taco cat parts/*.tacozip parts/ --overwrite",
        "taco info parts/.tacocat",
    ],
)
@click.argument("parts", nargs=-1, required=True)
@click.argument("output")
@click.option(
    "--no-check",
    is_flag=True,
    help="Do not refuse parts whose schemas or PIT structure differ.",
)
def cat(common: Common, parts: tuple[str, ...], output: str, no_check: bool) -> None:
    """Write the TACOCAT (.tacocat/ and __TACOCAT__) of the ZIP PARTS into folder OUTPUT.

    The parts stay where they are; a TACOCAT is read from the folder holding them,
    so OUTPUT is normally that folder.
    """
    from taco_gdal.write import create_tacocat

    written = create_tacocat(
        list(parts),
        output,
        validate_schema=not no_check,
        overwrite=common.overwrite,
        quiet=not common.progress,
    )
    if common.json:
        emit_json({"written": [str(p) for p in written], "parts": len(parts)})
    else:
        for path in written:
            click.echo(str(path))


command = cat
