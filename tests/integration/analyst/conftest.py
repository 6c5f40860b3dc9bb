"""Mixed-CRS datasets built from rasters with samples_from_rasters / ISTAC.from_raster.

* ``flat_path``: one FILE per scene of :data:`scenes.SCENES` (UTM 30N, UTM 31N,
  EPSG:4326, one UTM 60S scene across the antimeridian), with STAC, ISTAC and
  GeotiffStats, written as a ZIP.
* ``nested_path``: six FOLDERs ``grp0..grp5`` of three FILE children ``a b c``
  in three different CRSs each (scenes ``i``, ``i+6``, ``i+12``), children with
  ISTAC only, the folders without geometry: a spatial filter at level 1 keeps
  a folder when one of its children intersects.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from taco_gdal.extensions import ISTAC, GeotiffStats
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.rasters import samples_from_rasters
from taco_gdal.write import create
from tests.support.scenes import SCENES, write_scenes

GROUPS = 6
CHILDREN = ("a", "b", "c")


def group_members(group: int) -> list[str]:
    """Stems of the scenes inside FOLDER ``grp<group>`` (children a, b, c)."""
    return [SCENES[group + 6 * k].stem for k in range(len(CHILDREN))]


def _taco(tortilla: Tortilla, name: str) -> Taco:
    return Taco(
        tortilla,
        id=name,
        dataset_version="1.0.0",
        description="mixed-CRS scenes for the analyst tests",
        licenses=["CC-BY-4.0"],
        providers=[{"name": "taco_gdal tests"}],
        tasks=["classification"],
        title=name,
    )


@pytest.fixture(scope="session")
def scene_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("scenes")
    write_scenes(folder)
    return folder


@pytest.fixture(scope="session")
def flat_path(scene_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    samples = samples_from_rasters(scene_dir)
    for sample in samples:
        sample.extend_with(GeotiffStats())
    out = tmp_path_factory.mktemp("flat") / "mixed.tacozip"
    return Path(create(_taco(Tortilla(samples), "mixed_flat"), out, quiet=True)[0])


@pytest.fixture(scope="session")
def nested_path(scene_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folders = []
    for group in range(GROUPS):
        children = [
            Sample(child, scene_dir / f"{stem}.tif").extend_with(
                ISTAC.from_raster(scene_dir / f"{stem}.tif")
            )
            for child, stem in zip(CHILDREN, group_members(group), strict=True)
        ]
        folders.append(Sample(f"grp{group}", Tortilla(children)))
    out = tmp_path_factory.mktemp("nested") / "nested.tacozip"
    return Path(create(_taco(Tortilla(folders), "mixed_nested"), out, quiet=True)[0])
