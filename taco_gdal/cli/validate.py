"""``taco validate PATH``: does the dataset follow the rules of the TACO specification?"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING

import click

from taco_gdal.cli._options import Common, verb
from taco_gdal.cli._report import print_report

if TYPE_CHECKING:
    from taco_gdal.verify.report import Failure

__all__ = ["command", "parse_distance"]

_DISTANCE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(m|km)?\s*$")


def parse_distance(text: str) -> float:
    """``"100m"``, ``"1.5km"`` or ``"250"`` (metres) -> metres (click.BadParameter if not).

    Example:
        >>> parse_distance("1.5km"), parse_distance("100m"), parse_distance("0")
        (1500.0, 100.0, 0.0)
    """
    match = _DISTANCE.match(text)
    if match is None:
        raise click.BadParameter(
            f"expected a distance such as 100m, 1.5km or 250 (metres), found {text!r}",
            param_hint="--buffer",
        )
    return float(match.group(1)) * (1000.0 if match.group(2) == "km" else 1.0)


@verb(
    "validate",
    examples=[
        "taco validate dataset.tacozip",
        "taco validate https://host/dataset.tacozip --json | jq '.failures[].code'",
        "taco validate dataset.tacozip --splits split --buffer 100m",
    ],
)
@click.argument("path")
@click.option(
    "--splits",
    "splits",
    metavar="COLUMN",
    default=None,
    help="Also check that the splits in COLUMN do not leak: footprints that overlap "
    "(or come within --buffer) and stored digests shared across splits.",
)
@click.option(
    "--buffer", "buffer", default="0", metavar="DISTANCE", help="With --splits: 100m, 1.5km."
)
def validate(common: Common, path: str, splits: str | None, buffer: str) -> None:
    """Check PATH against the TACO specification's rules (COLLECTION, PIT, schemas).

    Exit code 0 when every rule holds, 1 when one fails (each failure printed
    with its code, what was expected and found, and where).  With --splits, every
    leaking pair (SPLIT_OVERLAP) and shared digest (SPLIT_DUPLICATE) is a failure.
    """
    from taco_gdal.verify import validate as run_validate

    buffer_m = parse_distance(buffer)
    if buffer_m and splits is None:
        raise click.UsageError("--buffer applies to the --splits check; give --splits COLUMN too")
    report = run_validate(path)
    if splits is not None:
        report = dataclasses.replace(
            report, failures=report.failures + _leaks(path, splits, buffer_m)
        )
    print_report(common, report, "validate", path)


def _leaks(path: str, column: str, buffer_m: float) -> tuple[Failure, ...]:
    from taco_gdal.read.leakage import check_splits
    from taco_gdal.read.load import load
    from taco_gdal.verify import codes
    from taco_gdal.verify.report import Failure

    with load(path) as ds:
        found = check_splits(ds, column, buffer_m)
    near = f"come within {buffer_m:g} m" if buffer_m else "overlap"
    overlaps = [
        Failure(
            codes.SPLIT_OVERLAP,
            f"samples {a} ({sa}) and {b} ({sb}) of different {column!r} splits: footprints {near}",
            row_id=f"level0 ({a}, {b})",
        )
        for a, b, sa, sb in found.overlaps
    ]
    duplicates = [
        Failure(
            codes.SPLIT_DUPLICATE,
            f"digest {digest} is held by samples of different {column!r} splits: {', '.join(ids)}",
            row_id=f"level0 ({', '.join(ids)})",
        )
        for digest, ids in found.duplicates
    ]
    return (*overlaps, *duplicates)


command = validate
