"""Reading TACO datasets: load, query lazily with DuckDB, navigate, concatenate.

* :func:`load` opens a ZIP, FOLDER or TACOCAT (or a plugin's format) from
  metadata alone, through GDAL's VSI layer;
* :class:`TacoDataset` holds COLLECTION metadata and a lazy, chainable view
  (``sql``, ``filter_bbox``, ``filter_datetime``);
* ``.data`` runs the view into a :class:`TacoDataFrame` (a GeoDataFrame when
  there is geometry) whose ``read()`` returns GDAL paths or child frames;
* :func:`concat` joins datasets with correct row ids.
"""

from __future__ import annotations

from taco_gdal.read.concat import concat
from taco_gdal.read.dataframe import TacoDataFrame, TacoGeoDataFrame
from taco_gdal.read.dataset import TacoDataset
from taco_gdal.read.load import load

__all__ = ["TacoDataFrame", "TacoDataset", "TacoGeoDataFrame", "concat", "load"]
