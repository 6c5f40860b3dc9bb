"""``taco verify PATH``: are the container's bytes what its metadata says?"""

from __future__ import annotations

from typing import Literal

import click

from taco_gdal.cli._options import Common, verb
from taco_gdal.cli._report import print_report

__all__ = ["command"]


@verb(
    "verify",
    examples=[
        "taco verify dataset.tacozip",
        "taco verify dataset.tacozip --level full --json",
        "taco verify s3://bucket/dataset.tacozip --level structure",
    ],
)
@click.argument("path")
@click.option(
    "--level",
    type=click.Choice(["structure", "crc", "full"]),
    default="crc",
    help="structure: offsets and members; crc: also ZIP CRCs; full: also sample digests.",
)
def verify(common: Common, path: str, level: Literal["structure", "crc", "full"]) -> None:
    """Check the bytes of PATH: header, members, offsets, CRCs, stored digests.

    Exit code 0 when everything matches, 1 when something does not.
    """
    from taco_gdal.verify import verify as run_verify

    print_report(common, run_verify(path, level=level), "verify", path)


command = verify
