"""The QGIS GUI part: a menu entry and toolbar buttons around :mod:`taco_layer`."""

from __future__ import annotations

from typing import Any

from qgis.core import Qgis, QgsVectorLayer
from qgis.PyQt.QtWidgets import QAction, QFileDialog, QInputDialog

from .taco_layer import TacoPluginError, add_dataset, add_sample

_MENU = "&TACO"


class TacoPlugin:
    """Adds "Add TACO dataset..." and "Open selected TACO samples" to the Raster menu."""

    def __init__(self, iface: Any) -> None:
        self.iface = iface
        self.actions: list[QAction] = []

    def initGui(self) -> None:
        window = self.iface.mainWindow()
        add = QAction("Add TACO dataset...", window)
        add.triggered.connect(self.add_dataset)
        url = QAction("Add TACO dataset from URL...", window)
        url.triggered.connect(self.add_url)
        open_samples = QAction("Open selected TACO samples", window)
        open_samples.triggered.connect(self.open_selected)
        for action in (add, url, open_samples):
            self.iface.addPluginToRasterMenu(_MENU, action)
            self.actions.append(action)

    def unload(self) -> None:
        for action in self.actions:
            self.iface.removePluginRasterMenu(_MENU, action)
        self.actions.clear()

    def _report(self, exc: Exception) -> None:
        self.iface.messageBar().pushMessage("TACO", str(exc), level=Qgis.Critical, duration=10)

    def _add(self, dataset: str) -> None:
        try:
            layer = add_dataset(dataset)
        except TacoPluginError as exc:
            self._report(exc)
            return
        self.iface.messageBar().pushMessage(
            "TACO", f"{layer.featureCount()} samples from {dataset}", level=Qgis.Info, duration=5
        )

    def add_dataset(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self.iface.mainWindow(),
            "Add TACO dataset",
            "",
            "TACO datasets (*.tacozip *.zip __TACOCAT__ COLLECTION.json);;All files (*)",
        )
        if path:
            if path.endswith("COLLECTION.json"):
                path = path.rsplit("/", 1)[0]
            self._add(path)

    def add_url(self) -> None:
        url, ok = QInputDialog.getText(
            self.iface.mainWindow(),
            "Add TACO dataset",
            "URL or GDAL path:",
        )
        if ok and url.strip():
            self._add(url.strip())

    def open_selected(self) -> None:
        layer = self.iface.activeLayer()
        if not isinstance(layer, QgsVectorLayer) or "location" not in layer.fields().names():
            self._report(TacoPluginError("select features of a TACO footprint layer first"))
            return
        for feature in layer.selectedFeatures():
            try:
                add_sample(feature)
            except TacoPluginError as exc:
                self._report(exc)
