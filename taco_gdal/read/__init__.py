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

from typing import TYPE_CHECKING

# ``load`` and ``concat`` share their modules' names: bound here, at import, so
# that a later import of the submodule cannot leave the module in their place.
from taco_gdal._lazy import lazy_exports
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


__all__ = ["TacoDataFrame", "TacoDataset", "TacoGeoDataFrame", "concat", "load"]
