"""``taco index PATH OUT``: footprint layer (and VRT mosaics) for QGIS and GDAL."""

from __future__ import annotations

from pathlib import Path

import click

from taco_gdal.cli._options import Common, verb
from taco_gdal.cli._output import emit_json
from taco_gdal.cli._select import load_at_level, selection_options

__all__ = ["command"]


@verb(
    "index",
    writes=True,
    paths=("path", "output"),
    examples=[
        "taco index dataset.tacozip footprints.gpkg --layer footprints",
        "taco index dataset.tacozip footprints.fgb --bbox -10,35,5,44 --overwrite",
        "taco index dataset.tacozip footprints.gpkg --vrt mosaics/",
        "taco index tiles.caf footprints.gpkg --probe",
        "ogrinfo -so footprints.gpkg",
        "gdalinfo \"$(ogrinfo -q -sql 'SELECT location FROM footprints LIMIT 1' footprints.gpkg "
        "| sed -n 's/.*location (String) = //p')\"",
    ],
)
@click.argument("path")
@click.argument("output", type=click.Path(dir_okay=False, path_type=Path))
@selection_options
@click.option("--layer", help="Layer name [default: the dataset id].")
@click.option(
    "--vrt",
    "vrt_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Also write one VRT mosaic per (role, CRS) group into this folder "
    "(and GTI files with GDAL >= 3.9).",
)
@click.option(
    "--probe",
    is_flag=True,
    help="Open rasters whose metadata have no footprint (CAF, TARIDX) to outline them.",
)
def index(
    common: Common,
    path: str,
    output: Path,
    level: int,
    where: str | None,
    bbox: str | None,
    datetime_: str | None,
    layer: str | None,
    vrt_dir: Path | None,
    probe: bool,
) -> None:
    """Write the footprint layer of PATH to OUTPUT (.gpkg, .fgb, .geojson, .parquet).

    One EPSG:4326 feature per FILE sample (nested ones too), with the sample's
    GDAL path in 'location', its key, id, parent, role, CRS, time and scalar
    metadata.  --where applies to level-0 samples; --bbox and --datetime at --level.
    """
    from taco_gdal.index import index as write_index

    ds = load_at_level(path, level, where, bbox, datetime_)
    with ds:
        result = write_index(
            ds, output, layer=layer, overwrite=common.overwrite, vrt_dir=vrt_dir, probe=probe
        )
    if common.json:
        emit_json(
            {
                "written": [str(result.path)],
                "layer": result.layer,
                "features": result.features,
                "vrt": [str(p) for p in result.vrts],
                "gti": [str(p) for p in result.gti],
            }
        )
    else:
        for written in (result.path, *result.vrts, *result.gti):
            click.echo(str(written))


command = index
