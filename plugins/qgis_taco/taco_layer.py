"""Footprint and sample layers from a TACO dataset, for QGIS's own Python.

QGIS's Python cannot import taco_gdal (another interpreter, other packages),
so the footprint layer is written by the ``taco`` command in a subprocess
(``taco index DATASET OUT.gpkg``) and opened here with the OGR provider.  Each
feature's ``location`` field is a GDAL path that QGIS's GDAL provider opens
directly, so a sample becomes a raster layer without taco_gdal either.

Only the standard library and ``qgis.core`` are used: no iface, so this module
also runs headless (``QgsApplication`` with ``QT_QPA_PLATFORM=offscreen``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from qgis.core import QgsProject, QgsRasterLayer, QgsSettings, QgsVectorLayer

__all__ = [
    "SETTING_TACO_PATH",
    "TacoPluginError",
    "add_dataset",
    "add_sample",
    "find_taco",
    "run_index",
]

SETTING_TACO_PATH = "qgis_taco/taco_path"
"""QgsSettings key holding the path of the ``taco`` executable (else PATH is searched)."""
LOCATION_FIELD = "location"
_TIMEOUT = 600


class TacoPluginError(RuntimeError):
    """``taco`` is missing or failed; the message is its one-line error."""


def find_taco() -> str:
    """The ``taco`` executable: the plugin setting, else the first on PATH.

    Raises:
        TacoPluginError: neither names an executable file.
    """
    configured = str(QgsSettings().value(SETTING_TACO_PATH, "") or "")
    if configured:
        if os.path.isfile(configured) and os.access(configured, os.X_OK):
            return configured
        raise TacoPluginError(
            f"setting {SETTING_TACO_PATH} = {configured!r}: expected an executable `taco`, "
            "found none there"
        )
    found = shutil.which("taco")
    if found is None:
        raise TacoPluginError(
            "expected the `taco` command (pip install taco_gdal) on PATH or in the setting "
            f"{SETTING_TACO_PATH}, found neither"
        )
    return found


def _index_path(dataset: str, out_dir: Path) -> Path:
    digest = hashlib.sha256(dataset.encode("utf-8")).hexdigest()[:12]
    stem = Path(dataset.rstrip("/")).name.split(".")[0] or "taco"
    return out_dir / f"{stem}-{digest}.gpkg"


def run_index(
    dataset: str, output: Path, *, taco: str | None = None, extra: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Run ``taco index DATASET OUTPUT --overwrite --json``; return its JSON report.

    The report has ``written`` (``[OUTPUT]``), ``layer``, ``features``, ``vrt``
    and ``gti`` (see ``docs/cli-json-schema.json``).

    Raises:
        TacoPluginError: ``taco`` failed; its one-line error is the message.
    """
    argv = [taco or find_taco(), "index", dataset, str(output), "--overwrite", "--json", *extra]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=_TIMEOUT, check=False)
    if proc.returncode != 0 or not output.is_file():
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        detail = lines[-1] if lines else f"exit code {proc.returncode}"
        raise TacoPluginError(f"taco index {dataset}: {detail}")
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


def add_dataset(
    dataset: str,
    *,
    out_dir: str | os.PathLike[str] | None = None,
    project: QgsProject | None = None,
    taco: str | None = None,
    extra: tuple[str, ...] = (),
    mosaics: bool = False,
) -> QgsVectorLayer:
    """Index ``dataset`` with ``taco`` and add its footprint layer to the project.

    With ``mosaics``, ``taco index --vrt`` also writes one VRT mosaic per
    (role, CRS) group, added as raster layers below the footprints.

    Args:
        dataset: a .tacozip, TACO folder, TACOCAT, URL or GDAL path.
        out_dir: where the GeoPackage goes (default: a ``qgis_taco`` temp folder).
        project: default ``QgsProject.instance()``.
        taco: the executable (default :func:`find_taco`).
        extra: more ``taco index`` options (``--bbox``, ``--where``, ``--probe`` ...).
        mosaics: also add the VRT mosaics.

    Raises:
        TacoPluginError: ``taco`` failed, or QGIS could not open what it wrote.
    """
    folder = Path(out_dir) if out_dir is not None else Path(tempfile.gettempdir()) / "qgis_taco"
    folder.mkdir(parents=True, exist_ok=True)
    gpkg = _index_path(dataset, folder)
    if mosaics:
        extra = (*extra, "--vrt", str(gpkg.with_suffix("")) + "-mosaics")
    report = run_index(dataset, gpkg, taco=taco, extra=extra)
    target = project or QgsProject.instance()
    name = Path(dataset.rstrip("/")).name or dataset
    for vrt in report["vrt"]:
        mosaic = QgsRasterLayer(vrt, f"{name} {Path(vrt).stem}", "gdal")
        if not mosaic.isValid():
            raise TacoPluginError(f"{vrt}: GDAL could not open this mosaic")
        target.addMapLayer(mosaic)
    layer = QgsVectorLayer(f"{gpkg}|layername={report['layer']}", name, "ogr")
    if not layer.isValid():
        raise TacoPluginError(f"{gpkg}: QGIS could not open the footprint layer `taco` wrote")
    target.addMapLayer(layer)
    return layer


def add_sample(
    feature: Any, *, project: QgsProject | None = None, name: str | None = None
) -> QgsRasterLayer:
    """Add the raster a footprint feature points at (its ``location``) to the project.

    Raises:
        TacoPluginError: the feature has no location, or GDAL cannot open it.
    """
    location = str(feature[LOCATION_FIELD] or "")
    if not location:
        raise TacoPluginError(f"feature {feature.id()}: expected a {LOCATION_FIELD!r}, found none")
    title = name or str(feature["key"] if "key" in feature.fields().names() else location)
    layer = QgsRasterLayer(location, title, "gdal")
    if not layer.isValid():
        raise TacoPluginError(f"{location}: GDAL could not open this sample as a raster")
    (project or QgsProject.instance()).addMapLayer(layer)
    return layer
