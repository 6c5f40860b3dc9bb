"""taco_gdal: a GDAL-centric toolkit for TACO Earth-observation datasets.

Every sample resolves to a GDAL path (``/vsisubfile/{offset}_{size},{container}``)
that ``rasterio.open``, ``gdal.Open`` and QGIS read without extraction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from taco_gdal._lazy import lazy_exports
from taco_gdal._log import verbose
from taco_gdal.env import Env
from taco_gdal.errors import (
    TacoApproximationWarning,
    TacoChangedError,
    TacoChecksumError,
    TacoError,
    TacoExistsError,
    TacoFormatError,
    TacoIOError,
    TacoNavigationError,
    TacoPITError,
    TacoQueryError,
    TacoSchemaError,
    TacoValidationError,
    TacoWarning,
)

if TYPE_CHECKING:
    from taco_gdal import extensions
    from taco_gdal.generations import convert
    from taco_gdal.io.profile import read_profile, sample_env
    from taco_gdal.io.sample import open_sample
    from taco_gdal.io.telemetry import network_stats
    from taco_gdal.model import Curator, Extent, Provider, Sample, Taco, Tortilla
    from taco_gdal.rasters import samples_from_rasters
    from taco_gdal.read import TacoDataFrame, TacoDataset
    from taco_gdal.read.concat import concat  # the function, not its module
    from taco_gdal.read.interop.stac_items import samples_from_stac
    from taco_gdal.read.leakage import check_splits
    from taco_gdal.read.load import load
    from taco_gdal.verify import validate, verify
    from taco_gdal.write import create_tacocat, create_tacollection, folder2zip, zip2folder
    from taco_gdal.write.create import create
    from taco_gdal.write.export import export

__version__ = "0.1.0"

# Heavier entry points (pyarrow, DuckDB, geopandas) load on first use, so that
# ``import taco_gdal`` stays cheap and import cycles cannot form.
_LAZY = {
    "Sample": "taco_gdal.model",
    "Tortilla": "taco_gdal.model",
    "Taco": "taco_gdal.model",
    "Provider": "taco_gdal.model",
    "Curator": "taco_gdal.model",
    "Extent": "taco_gdal.model",
    "create": "taco_gdal.write",
    "create_tacocat": "taco_gdal.write",
    "create_tacollection": "taco_gdal.write",
    "export": "taco_gdal.write",
    "folder2zip": "taco_gdal.write",
    "zip2folder": "taco_gdal.write",
    "load": "taco_gdal.read",
    "concat": "taco_gdal.read",
    "TacoDataset": "taco_gdal.read",
    "TacoDataFrame": "taco_gdal.read",
    "extensions": "taco_gdal.extensions",
    "open_sample": "taco_gdal.io.sample",
    "sample_env": "taco_gdal.io.profile",
    "read_profile": "taco_gdal.io.profile",
    "network_stats": "taco_gdal.io.telemetry",
    "verify": "taco_gdal.verify",
    "convert": "taco_gdal.generations",
    "validate": "taco_gdal.verify",
    "samples_from_rasters": "taco_gdal.rasters",
    "check_splits": "taco_gdal.read.leakage",
    "samples_from_stac": "taco_gdal.read.interop.stac_items",
}


__getattr__, __dir__ = lazy_exports("taco_gdal", globals(), _LAZY)


__all__ = [
    "Curator",
    "Env",
    "Extent",
    "Provider",
    "Sample",
    "Taco",
    "TacoApproximationWarning",
    "TacoChangedError",
    "TacoChecksumError",
    "TacoDataFrame",
    "TacoDataset",
    "TacoError",
    "TacoExistsError",
    "TacoFormatError",
    "TacoIOError",
    "TacoNavigationError",
    "TacoPITError",
    "TacoQueryError",
    "TacoSchemaError",
    "TacoValidationError",
    "TacoWarning",
    "Tortilla",
    "__version__",
    "check_splits",
    "concat",
    "convert",
    "create",
    "create_tacocat",
    "create_tacollection",
    "export",
    "extensions",
    "folder2zip",
    "load",
    "network_stats",
    "open_sample",
    "read_profile",
    "sample_env",
    "samples_from_rasters",
    "samples_from_stac",
    "validate",
    "verbose",
    "verify",
    "zip2folder",
]
