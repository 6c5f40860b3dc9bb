"""``taco validate PATH``: does the dataset follow the rules of the TACO specification?"""

from __future__ import annotations

import click

from taco_gdal.cli._options import Common, verb
from taco_gdal.cli._report import print_report

__all__ = ["command"]


@verb(
    "validate",
    examples=[
        "taco validate dataset.tacozip",
        "taco validate https://host/dataset.tacozip --json | jq '.failures[].code'",
    ],
)
@click.argument("path")
def validate(common: Common, path: str) -> None:
    """Check PATH against the TACO specification's rules (COLLECTION, PIT, schemas).

    Exit code 0 when every rule holds, 1 when one fails (each failure printed
    with its code, what was expected and found, and where).
    """
    from taco_gdal.verify import validate as run_validate

    print_report(common, run_validate(path), "validate", path)


command = validate
