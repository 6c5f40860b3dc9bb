"""``taco open PATH ID``: the GDAL path of one sample, for ``gdalinfo "$(taco open ...)"``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from taco_gdal.cli._options import Common, verb
from taco_gdal.cli._output import emit_json

if TYPE_CHECKING:
    from taco_gdal.read.dataset import TacoDataset

__all__ = ["command", "resolve"]


def resolve(ds: TacoDataset, sample: str) -> tuple[str, str]:
    """``(type, GDAL path)`` of the sample ``sample`` names: ids or positions joined by ``/``.

    A FOLDER's path is its ``__meta__`` (the metadata of its children).

    Example:
        >>> resolve(taco_gdal.load("tiles.tacozip"), "tile001/b04")
        ('FILE', '/vsisubfile/3543_622,.../tiles.tacozip')
    """
    from taco_gdal.errors import TacoNavigationError
    from taco_gdal.format.names import FILE, FOLDER, GDAL_VSI, ID

    steps = [s for s in sample.split("/") if s]
    if not steps:
        raise TacoNavigationError(f"expected a sample id such as 'tile_3/B04', found {sample!r}")
    frame: Any = ds.data
    for depth, step in enumerate(steps):
        key: int | str = int(step) if step.isdigit() and step not in set(frame[ID]) else step
        target = frame.read(key)
        if isinstance(target, str):
            if depth != len(steps) - 1:
                raise TacoNavigationError(
                    f"{ds.path}: expected a FOLDER at {'/'.join(steps[: depth + 1])!r} to go on "
                    f"to {steps[depth + 1]!r}, found a FILE sample"
                )
            return FILE, target
        if depth == len(steps) - 1:
            row = frame[frame[ID] == step] if not isinstance(key, int) else frame.iloc[[key]]
            return FOLDER, str(row[GDAL_VSI].iloc[0])
        frame = target
    raise AssertionError("unreachable")  # pragma: no cover


@verb(
    "open",
    examples=[
        "taco open dataset.tacozip s003",
        'gdalinfo "$(taco open dataset.tacozip tile_3/B04)"',
        "taco open dataset.tacozip 0/2 --json",
    ],
)
@click.argument("path")
@click.argument("sample")
def open_(common: Common, path: str, sample: str) -> None:
    """Print the GDAL path of SAMPLE (ids joined with '/', e.g. tile_3/B04).

    A FOLDER sample prints the path of its __meta__ (the table of its children).
    """
    from taco_gdal.read.load import load

    with load(path) as ds:
        kind, location = resolve(ds, sample)
    if common.json:
        emit_json({"path": ds.path, "sample": sample, "type": kind, "location": location})
    else:
        click.echo(location)


command = open_
