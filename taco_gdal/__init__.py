"""taco_gdal: a GDAL-centric toolkit for TACO Earth-observation datasets.

Every sample resolves to a GDAL path (``/vsisubfile/{offset}_{size},{container}``)
that ``rasterio.open``, ``gdal.Open`` and QGIS read without extraction.
"""

from __future__ import annotations

from taco_gdal._log import verbose
from taco_gdal.env import Env
from taco_gdal.errors import (
    TacoChangedError,
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

__version__ = "0.1.0"

__all__ = [
    "Env",
    "TacoChangedError",
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
    "__version__",
    "verbose",
]
