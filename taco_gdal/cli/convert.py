"""``taco convert SRC OUT``: ZIP -> FOLDER, FOLDER -> ZIP, plugin formats -> TACO ZIP.

A plugin format converts through the function registered under the
``taco_gdal.converters`` entry points:
``(source, output, dataset_id=None, overwrite=False, quiet=False)``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from taco_gdal.cli._options import Common, verb
from taco_gdal.cli._output import emit_json

__all__ = ["CONVERTERS_GROUP", "command", "converter_for"]

CONVERTERS_GROUP = "taco_gdal.converters"


def converter_for(fmt: str, where: str) -> Callable[..., Path]:
    """The converter a plugin registered for container format ``fmt``.

    Example:
        >>> converter_for("caf", "tiles.caf").__name__
        'caf_to_taco'
    """
    from importlib.metadata import entry_points

    from taco_gdal.errors import TacoValidationError

    found = {ep.name: ep for ep in entry_points(group=CONVERTERS_GROUP)}
    if fmt not in found:
        raise TacoValidationError(
            f"{where}: expected a format with a converter to TACO ({', '.join(sorted(found))}, "
            f"or a TACO zip/folder), found a {fmt} dataset"
        )
    function: Callable[..., Path] = found[fmt].load()
    return function


def _convert(common: Common, source: str, output: str, dataset_id: str | None) -> tuple[str, Path]:
    from taco_gdal.format.vsi import to_vsi
    from taco_gdal.read.opening.containers import registry
    from taco_gdal.read.opening.containers.base import Probe
    from taco_gdal.write import folder2zip, zip2folder

    fmt = registry.detect(Probe(to_vsi(source), source)).format
    options: dict[str, Any] = {"overwrite": common.overwrite, "quiet": not common.progress}
    if fmt == "zip":
        return fmt, zip2folder(source, output, **options)
    if fmt == "folder":
        return fmt, folder2zip(source, output, **options)
    return fmt, converter_for(fmt, source)(source, output, dataset_id=dataset_id, **options)


@verb(
    "convert",
    writes=True,
    paths=("source", "output"),
    examples=[
        "taco convert dataset.tacozip dataset/",
        "taco convert dataset/ dataset.tacozip --overwrite",
        "taco convert tiles.caf tiles.tacozip --id tiles",
        "taco convert train.taridx train.tacozip",
    ],
)
@click.argument("source")
@click.argument("output")
@click.option("--id", "dataset_id", help="Plugin formats: the new dataset's id.")
def convert(common: Common, source: str, output: str, dataset_id: str | None) -> None:
    """Convert SOURCE to OUTPUT: a TACO ZIP to a FOLDER, a FOLDER to a ZIP, or a
    plugin format (CAF, TARIDX) to a TACO ZIP.  Sample bytes are copied, never re-encoded.
    """
    fmt, written = _convert(common, source, output, dataset_id)
    if common.json:
        emit_json({"written": [str(written)], "from": fmt})
    else:
        click.echo(str(written))


command = convert
