"""The QGIS plugin, headless with Debian's PyQGIS: footprints and a sample rendered to PNG.

QGIS's Python is another interpreter (/usr/bin/python3 with python3-qgis), so
the test runs ``render_layers.py`` there in a subprocess, with the venv's
``taco`` on PATH as a user's would be; a missing PyQGIS fails the test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import rasterio
from rasterio.errors import NotGeoreferencedWarning

import taco_gdal
from taco_gdal.format.names import GDAL_VSI
from tests.support.rasters import raster_folder

SYSTEM_PYTHON = Path("/usr/bin/python3")
HERE = Path(__file__).parent
PLUGINS = HERE.parents[1] / "plugins"


def _painted(png: Path) -> tuple[float, float]:
    """Share of non-white pixels: over the whole image, and in its central half."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotGeoreferencedWarning)  # a PNG has no georeferencing
        with rasterio.open(png) as src:
            rgb = src.read((1, 2, 3)).astype(np.int16)
    painted = np.abs(rgb - 255).sum(axis=0) > 30
    h, w = painted.shape
    return float(painted.mean()), float(painted[h // 4 : 3 * h // 4, w // 4 : 3 * w // 4].mean())


def test_plugin_adds_and_renders_footprints_and_a_sample(tmp_path: Path) -> None:
    from taco_gdal.model import Taco, Tortilla
    from taco_gdal.rasters import samples_from_rasters
    from taco_gdal.write import create

    assert SYSTEM_PYTHON.is_file(), "Debian's python3 (with python3-qgis) is required"
    folder = raster_folder(tmp_path, utm=2, lonlat=0)
    taco = Taco(
        Tortilla(samples_from_rasters(folder)),
        id="qgis_test", dataset_version="1", description="QGIS test", licenses=["other"],
        providers=[{"name": "tests"}], tasks=["other"],
    )  # fmt: skip
    dataset = create(taco, tmp_path / "qgis.tacozip", quiet=True)[0]
    out = Path(os.environ.get("TACO_QGIS_PNG_DIR", tmp_path / "render"))
    out.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "XDG_RUNTIME_DIR": str(tmp_path),
        "HOME": str(tmp_path),
    }
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(
        [str(SYSTEM_PYTHON), str(HERE / "render_layers.py"), str(PLUGINS), str(dataset), str(out)],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    ds = taco_gdal.load(dataset)
    assert summary["features"] == 2 and summary["crs"] == "EPSG:4326"
    assert summary["locations"] == list(ds.data[GDAL_VSI])
    assert {"location", "key", "id", "time_start"} <= set(summary["fields"])
    assert summary["raster_size"] == [20, 20]
    assert summary["plugin"] == ["classFactory", "TacoPlugin"]  # the GUI module imports in QGIS
    assert len(summary["layers"]) == 3  # footprints, the sample, the mosaic
    assert summary["mosaic_size"] == [40, 20]  # the two UTM tiles side by side
    assert summary["raster_source"] == ds.read(0)
    for png in ("footprints.png", "sample.png", "mosaic.png"):
        whole, centre = _painted(out / png)
        assert 0.05 < whole < 0.999, f"{png}: {whole:.3f} of the pixels painted"
        assert centre > 0.5, f"{png}: only {centre:.3f} of the map's centre is painted"
