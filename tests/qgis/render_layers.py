"""Run by Debian's /usr/bin/python3 (PyQGIS), never by the venv: see test_qgis_plugin.py.

Usage: render_layers.py PLUGINS_DIR DATASET OUT_DIR

Loads the plugin's module from PLUGINS_DIR, adds DATASET as a footprint layer
through `taco index` (found on PATH), adds the first feature's sample as a
raster from its `location`, renders each with QgsMapRendererParallelJob to
OUT_DIR/footprints.png, sample.png and
mosaic.png (the VRT mosaic `taco index --vrt` wrote), and prints a JSON summary.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from qgis.core import (
    QgsApplication,
    QgsMapRendererParallelJob,
    QgsMapSettings,
    QgsProject,
)
from qgis.PyQt.QtCore import QSize
from qgis.PyQt.QtGui import QColor


def render(layer, target: Path) -> None:
    settings = QgsMapSettings()
    settings.setLayers([layer])
    settings.setDestinationCrs(layer.crs())
    extent = layer.extent()
    extent.scale(1.1)
    settings.setExtent(extent)
    settings.setOutputSize(QSize(200, 200))
    settings.setBackgroundColor(QColor(255, 255, 255))
    job = QgsMapRendererParallelJob(settings)
    job.start()
    job.waitForFinished()
    if not job.renderedImage().save(str(target), "PNG"):
        raise RuntimeError(f"could not save {target}")


def main() -> None:
    plugins, dataset, out = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    app = QgsApplication([], False)
    app.initQgis()
    sys.path.insert(0, str(plugins))
    import qgis_taco
    from qgis_taco.plugin import TacoPlugin
    from qgis_taco.taco_layer import add_dataset, add_sample

    layer = add_dataset(dataset, out_dir=out, mosaics=True)
    features = list(layer.getFeatures())
    raster = add_sample(features[0])
    mosaic = next(
        lyr for lyr in QgsProject.instance().mapLayers().values() if "mosaic" in lyr.source()
    )
    render(layer, out / "footprints.png")
    render(raster, out / "sample.png")
    render(mosaic, out / "mosaic.png")
    summary = {
        "features": layer.featureCount(),
        "fields": layer.fields().names(),
        "crs": layer.crs().authid(),
        "locations": [f["location"] for f in features],
        "keys": [f["key"] for f in features],
        "raster_size": [raster.width(), raster.height()],
        "raster_source": raster.source(),
        "mosaic_size": [mosaic.width(), mosaic.height()],
        "plugin": [qgis_taco.classFactory.__name__, TacoPlugin.__name__],
        "layers": sorted(lyr.name() for lyr in QgsProject.instance().mapLayers().values()),
    }
    print(json.dumps(summary))
    QgsProject.instance().clear()
    app.exitQgis()


if __name__ == "__main__":
    main()
