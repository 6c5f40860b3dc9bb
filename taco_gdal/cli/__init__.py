"""The ``taco`` command (also ``rio taco`` and ``python -m taco_gdal``), shaped like GDAL's
``gdal``: each verb module is imported only when it runs, so ``taco --help`` loads no
pyarrow, DuckDB or geopandas.  Exit codes and one-line errors: see ``_EPILOG``.

Example:
    >>> from click.testing import CliRunner
    >>> CliRunner().invoke(cli, ["--version"]).output.startswith("taco")
    True
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from taco_gdal.cli._errors import run_guarded

__all__ = ["VERBS", "cli", "main"]

VERBS: dict[str, str] = {
    "info": "Collection, hierarchy, counts per level, extent, size, container.",
    "ls": "List samples with their GDAL paths (table, CSV, JSON lines, Parquet).",
    "sql": "Run a DuckDB query over data / level0..N.",
    "open": "Print the GDAL path of one sample (ids joined with '/').",
    "create": "Write a TACO dataset from a folder of rasters or a table of paths.",
    "export": "Write the samples that pass filters as a new dataset.",
    "convert": "ZIP <-> FOLDER, and plugin formats (CAF, TARIDX) to a TACO ZIP.",
    "cat": "Consolidate TACO ZIP parts into a TACOCAT.",
    "validate": "Check a dataset against the rules of the TACO specification.",
    "verify": "Check a container's bytes: structure, CRCs, sample digests.",
    "index": "Write a footprint layer (GPKG, FlatGeobuf, GeoParquet) and VRT mosaics.",
    "croissant": "Write Croissant 1.1 JSON-LD (GeoCroissant extent, CRS) for ML catalogues.",
    "stac": "Write the samples as STAC Items (JSON, NDJSON, stac-geoparquet).",
}
"""Verb -> one-line summary, in the order ``taco --help`` lists them."""

_EPILOG = """\b
Exit codes: 0 ok, 1 invalid data / failed check / I/O error, 2 usage error.
Every verb takes --config KEY=VALUE (GDAL options, this command only) and --debug.

\b
Examples:
  taco info dataset.tacozip
  taco ls dataset.tacozip --bbox -4,40,-3,41 --format csv
  gdalinfo "$(taco open dataset.tacozip tile_3/B04)"
"""


class VerbGroup(click.Group):
    """A group whose verbs load on first use and whose errors print one line."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*VERBS, *sorted(set(self.commands) - set(VERBS))]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in VERBS:  # a command added with add_command()
            return super().get_command(ctx, cmd_name)
        module = importlib.import_module(f"taco_gdal.cli.{cmd_name}")
        command: click.Command = module.command
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # summaries from VERBS: `taco --help` imports no verb module
        with formatter.section("Commands"):
            added = [(n, c.get_short_help_str()) for n, c in sorted(self.commands.items())]
            formatter.write_dl([*VERBS.items(), *(a for a in added if a[0] not in VERBS)])

    def invoke(self, ctx: click.Context) -> Any:
        return run_guarded(ctx, lambda: super(VerbGroup, self).invoke(ctx))


@click.group(
    "taco", cls=VerbGroup, epilog=_EPILOG, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.version_option(package_name="taco_gdal", prog_name="taco")
def cli() -> None:
    """Read, query, write and index TACO Earth-observation datasets.

    Every sample is a GDAL path (/vsisubfile/<offset>_<size>,<container>) that
    gdalinfo, rasterio and QGIS open as they are.
    """


def main() -> None:
    """Entry point of the ``taco`` console script.

    Example:
        ``$ taco info dataset.tacozip``
    """
    cli(prog_name="taco")
