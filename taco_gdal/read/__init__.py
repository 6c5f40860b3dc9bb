"""Reading TACO datasets: load, query lazily with DuckDB, navigate, concatenate.

One concept per subpackage, each importing only the ones after it:
:mod:`~taco_gdal.read.frames` (frames, navigation, lazy columns),
:mod:`~taco_gdal.read.notebook` (reprs, map, plots), :mod:`~taco_gdal.read.spatial`
(footprints, spatial filters), :mod:`~taco_gdal.read.query` (query state, SQL,
DuckDB, filters, stats) and :mod:`~taco_gdal.read.opening` (locations, containers);
``load``, ``concat`` and ``TacoDataset`` sit above them all.  Names are imported on
first use, so that importing a container or the parser does not import pandas.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import TYPE_CHECKING

# ``load`` and ``concat`` share their modules' names: bound here, at import, so
# that a later import of the submodule cannot leave the module in their place.
from taco_gdal._lazy import lazy_exports
from taco_gdal._moved import moved_module
from taco_gdal.read.concat import concat
from taco_gdal.read.load import load

if TYPE_CHECKING:
    from taco_gdal.read.dataset import TacoDataset
    from taco_gdal.read.frames.dataframe import TacoDataFrame, TacoGeoDataFrame

_LAZY = {
    "TacoDataFrame": "taco_gdal.read.frames.dataframe",
    "TacoGeoDataFrame": "taco_gdal.read.frames.dataframe",
    "TacoDataset": "taco_gdal.read.dataset",
}


__getattr__, __dir__ = lazy_exports("taco_gdal.read", globals(), _LAZY)

_MOVED = {
    "taco_gdal.read.dataframe": "taco_gdal.read.frames.dataframe",
    "taco_gdal.read.navigation": "taco_gdal.read.frames.navigation",
    "taco_gdal.read.hub": "taco_gdal.read.opening.hub",
    "taco_gdal.read.filters": "taco_gdal.read.query.filters",
    "taco_gdal.read.levels": "taco_gdal.read.query.prepared",
    "taco_gdal.read.state": "taco_gdal.read.query.state",
    "taco_gdal.read.stats": "taco_gdal.read.query.stats",
    "taco_gdal.read.timerange": "taco_gdal.read.query.timerange",
    **{
        f"taco_gdal.read.containers.{name}": f"taco_gdal.read.opening.containers.{name}"
        for name in ("base", "folder", "registry", "tacocat", "zip")
    },
}
"""Module paths from before read/ was laid out by concept, and where each moved."""


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old path of :data:`_MOVED` as its new module, with a DeprecationWarning."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None, /
    ) -> ModuleSpec | None:
        return importlib.util.spec_from_loader(fullname, self) if fullname in _MOVED else None

    def exec_module(self, module: ModuleType) -> None:
        moved_module(module.__name__, _MOVED[module.__name__])


sys.meta_path.append(_MovedModules())


__all__ = ["TacoDataFrame", "TacoDataset", "TacoGeoDataFrame", "concat", "load"]
