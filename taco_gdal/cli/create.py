"""``taco create SOURCE OUT``: a TACO dataset from a folder of rasters or a table of paths.

* a folder: :func:`taco_gdal.rasters.samples_from_rasters` makes one FILE
  sample per raster matching ``--pattern``, with STAC/ISTAC metadata
  (footprint, CRS, time) read from the rasters;
* a ``.csv`` / ``.parquet`` table: one FILE sample per row; ``path``
  (relative paths are taken from the table's folder) is required, ``id``
  defaults to the file name without suffix, ``time_start`` (optional) is the
  acquisition time, every other column is kept as metadata.  Unless
  ``--no-stac``, CRS, shape and geotransform are read from each raster.

The COLLECTION fields come from options (``--id`` defaults to OUT's name).
``--stats`` adds per-band statistics (``geotiff:stats`` and the mergeable sketches of
``taco_gdal:stats_sketch``, read from every raster) that ``stats()``, ``stats_mean()``
and the other ``stats_*`` methods of a loaded dataset use;
``--stats-classes 0,1,2`` makes them class fractions of a categorical raster.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from taco_gdal.cli._options import Common, checksum_option, verb
from taco_gdal.cli._output import emit_json

if TYPE_CHECKING:
    import pyarrow as pa

    from taco_gdal.model import Sample

__all__ = ["command", "samples_from_table"]

_TABLE_SUFFIXES = (".csv", ".parquet", ".geoparquet")
_TIME_COLUMN = "time_start"


def _read_table(path: Path) -> pa.Table:
    from taco_gdal.errors import TacoFormatError

    try:
        if path.suffix.lower() == ".csv":
            import pyarrow.csv as pacsv

            return pacsv.read_csv(path)
        import pyarrow.parquet as pq

        return pq.read_table(path)
    except (OSError, ValueError) as exc:
        raise TacoFormatError(
            f"{path}: expected a readable {path.suffix} table of sample paths, found: {exc}"
        ) from exc


def samples_from_table(table_path: Path, stac: bool, time: datetime | None) -> list[Sample]:
    """One FILE sample per row of a CSV/Parquet table (``path`` column required).

    Raises:
        TacoValidationError: no ``path`` column, or a row's raster lacks a CRS or a time.
        TacoIOError: a path does not exist.

    Example:
        >>> _ = Path("scenes.csv").write_text("path\\nscenes/scene0.tif\\nscenes/scene1.tif\\n")
        >>> samples_from_table(Path("scenes.csv"), stac=True, time=None)
        [Sample(id='scene0', type='FILE', fields=['stac:crs', ...]), Sample(id='scene1', ...)]
    """
    from taco_gdal.errors import TacoValidationError
    from taco_gdal.extensions import STAC
    from taco_gdal.format.names import ID, PATH
    from taco_gdal.model import Sample

    table = _read_table(table_path)
    if PATH not in table.column_names:
        raise TacoValidationError(
            f"{table_path}: expected a {PATH!r} column naming each raster, found columns "
            f"{table.column_names}"
        )
    samples = []
    for position, row in enumerate(table.to_pylist()):
        location = str(row.pop(PATH))
        if "://" not in location and not location.startswith("/vsi"):
            location = str((table_path.parent / location).resolve())
        sample_id = str(row.pop(ID, None) or Path(location).stem)
        start = row.pop(_TIME_COLUMN, None) or time
        metadata: dict[str, Any] = {k: v for k, v in row.items() if v is not None}
        try:
            sample = Sample(sample_id, location, **metadata)
            if stac:
                sample.extend_with(STAC.from_raster(location, time_start=start))
        except TacoValidationError as exc:
            raise TacoValidationError(f"{table_path} row {position}: {exc}") from exc
        samples.append(sample)
    return samples


def _samples_from_folder(folder: Path, pattern: str, time: datetime | None) -> list[Sample]:
    from taco_gdal.errors import TacoValidationError

    try:
        from taco_gdal.rasters import samples_from_rasters
    except ImportError as exc:
        raise TacoValidationError(
            f"{folder}: creating from a folder of rasters needs "
            f"taco_gdal.rasters.samples_from_rasters, which this installation lacks ({exc}); "
            f"give a CSV/Parquet table of paths instead"
        ) from exc
    return list(samples_from_rasters(folder, pattern=pattern, time=time))


def _classes(text: str | None) -> list[int] | None:
    """``"0,1,2"`` as ``[0, 1, 2]`` (None: continuous statistics)."""
    if text is None:
        return None
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError as exc:
        raise click.BadParameter(
            f"expected comma-separated integer class values such as 0,1,2, found {text!r}",
            param_hint="--stats-classes",
        ) from exc
    if not values:
        raise click.BadParameter(
            f"expected at least one class value such as 0,1,2, found {text!r}",
            param_hint="--stats-classes",
        )
    return values


def _add_stats(samples: list[Sample], classes: list[int] | None) -> None:
    """Extend every sample with its ``geotiff:stats`` (continuous, or class fractions)."""
    from taco_gdal.extensions import GeotiffStats

    extension = GeotiffStats(categorical=classes is not None, class_values=classes)
    for sample in samples:
        sample.extend_with(extension)


def default_id(output: str) -> str:
    """A valid dataset id from the output's name.

    Example:
        >>> default_id("out/My Tiles.tacozip")
        'my_tiles'
    """
    stem = Path(output.rstrip("/")).name.split(".")[0].lower()
    return re.sub(r"[^a-z0-9_-]+", "_", stem).strip("_") or "dataset"


@verb(
    "create",
    writes=True,
    paths=("source", "output"),
    examples=[
        "taco create rasters/ tiles.tacozip --license CC-BY-4.0 --task segmentation",
        "taco create rasters/ tiles.tacozip --pattern '*_B04.tif' --time 2023-06-01",
        "taco create samples.csv tiles.tacozip --id tiles --title 'My tiles'",
        "taco create samples.parquet tiles/ --format folder",
        "taco create rasters/ tiles.tacozip --checksum sha256",
        "taco create rasters/ tiles.tacozip --stats",
        "taco create masks/ masks.tacozip --stats-classes 0,1,2",
        "taco create --from-stac items.parquet scenes.tacozip --assets red,green,nir",
        "taco create --from-stac https://host/catalog.json scenes.tacozip",
    ],
)
@click.argument("source")
@click.argument("output")
@click.option("--pattern", default="*.tif", help="Folder source: glob of the rasters.")
@click.option(
    "--time",
    "time",
    type=click.DateTime(["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M:%SZ"]),
    help="Acquisition time for rasters that carry none.",
)
@click.option("--stac/--no-stac", default=True, help="Table source: read CRS/grid from rasters.")
@click.option("--id", "dataset_id", help="Dataset id [default: from OUTPUT's name].")
@click.option("--title", help="Dataset title.")
@click.option("--description", help="Dataset description.")
@click.option("--version", "dataset_version", default="1.0.0", help="Dataset version.")
@click.option("--license", "licenses", multiple=True, default=["other"], help="SPDX id.")
@click.option("--provider", "providers", multiple=True, default=["unknown"], help="Provider.")
@click.option("--task", "tasks", multiple=True, default=["other"], help="ML task.")
@click.option("-f", "--format", "fmt", type=click.Choice(["auto", "zip", "folder"]), default="auto")
@click.option("--split-size", default="4GB", help="Most sample bytes per ZIP part.")
@click.option(
    "--stats",
    is_flag=True,
    help="Store per-band statistics and quantile sketches for ds.stats() and stats_*.",
)
@click.option(
    "--stats-classes",
    metavar="VALUES",
    help="With --stats: categorical rasters, fractions of these classes (e.g. 0,1,2).",
)
@click.option(
    "--from-stac",
    "from_stac",
    is_flag=True,
    help="SOURCE is STAC Items: ItemCollection / NDJSON / stac-geoparquet / catalog.json.",
)
@click.option("--assets", help="With --from-stac: asset keys to keep, e.g. red,green,nir.")
@checksum_option
def create(
    common: Common,
    source: Any,
    output: str,
    pattern: str,
    time: datetime | None,
    stac: bool,
    dataset_id: str | None,
    title: str | None,
    description: str | None,
    dataset_version: str,
    licenses: tuple[str, ...],
    providers: tuple[str, ...],
    tasks: tuple[str, ...],
    fmt: str,
    split_size: str,
    stats: bool,
    stats_classes: str | None,
    checksum: str | None,
    from_stac: bool,
    assets: str | None,
) -> None:
    """Write a TACO dataset (ZIP or FOLDER) from SOURCE.

    SOURCE is a folder of rasters (metadata read from the rasters: footprint,
    CRS, time) or a .csv/.parquet table with a 'path' column (plus optional
    'id', 'time_start' and metadata columns).  Prints the files written.
    --stats reads every raster once more for its per-band statistics.
    """
    from taco_gdal.model import Taco, Tortilla
    from taco_gdal.write import create as write

    if from_stac:
        from taco_gdal.read.interop.stac_items import samples_from_stac

        keys = [k.strip() for k in assets.split(",") if k.strip()] if assets else None
        samples = samples_from_stac(source, keys)
        source = Path(source.rstrip("/"))
    elif assets is not None:
        raise click.BadParameter("needs --from-stac as well", param_hint="--assets")
    elif not Path(source).exists():
        raise click.BadParameter(
            f"expected an existing path, found {source!r}", param_hint="SOURCE"
        )
    elif (source := Path(source)).is_dir():
        samples = _samples_from_folder(source, pattern, time)
    elif source.suffix.lower() in _TABLE_SUFFIXES:
        samples = samples_from_table(source, stac, time)
    else:
        raise click.BadParameter(
            f"expected a folder of rasters or a {'/'.join(_TABLE_SUFFIXES)} table, found {source}",
            param_hint="SOURCE",
        )
    classes = _classes(stats_classes)
    if classes is not None and not stats:
        raise click.BadParameter("needs --stats as well", param_hint="--stats-classes")
    if stats:
        _add_stats(samples, classes)
    taco = Taco(
        Tortilla(samples),
        id=dataset_id or default_id(output),
        dataset_version=dataset_version,
        description=description or f"Created with `taco create` from {source.name}",
        licenses=list(licenses),
        providers=[{"name": name} for name in providers],
        tasks=list(tasks),
        title=title,
    )
    written = write(
        taco,
        output,
        output_format=fmt,  # type: ignore[arg-type]
        split_size=split_size,
        overwrite=common.overwrite,
        quiet=not common.progress,
        checksum=checksum,
    )
    if common.json:
        emit_json({"written": [str(p) for p in written], "samples": len(samples)})
    else:
        for path in written:
            click.echo(str(path))


command = create
