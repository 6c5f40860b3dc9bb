"""Metadata extensions: declare an Arrow schema, compute rows (spec 7.1.2).

Sample extensions: :class:`STAC`, :class:`ISTAC`, :class:`Split`,
:class:`Scaling`, :class:`GeotiffStats`, :class:`PixelType`.  Tortilla extension:
:class:`MajorTOM`.
Taco extensions: :class:`Labels`, :class:`Publications`.
"""

from __future__ import annotations

from taco_gdal.extensions.base import (
    Extension,
    SampleExtension,
    TacoExtension,
    TortillaExtension,
)
from taco_gdal.extensions.geotiff_stats import GeotiffStats
from taco_gdal.extensions.istac import ISTAC
from taco_gdal.extensions.labels import LabelClass, Labels
from taco_gdal.extensions.majortom import MajorTOM
from taco_gdal.extensions.pixel_type import PixelType
from taco_gdal.extensions.publications import Publication, Publications
from taco_gdal.extensions.scaling import Scaling
from taco_gdal.extensions.split import Split
from taco_gdal.extensions.stac import STAC

__all__ = [
    "ISTAC",
    "STAC",
    "Extension",
    "GeotiffStats",
    "LabelClass",
    "Labels",
    "MajorTOM",
    "PixelType",
    "Publication",
    "Publications",
    "SampleExtension",
    "Scaling",
    "Split",
    "TacoExtension",
    "TortillaExtension",
]
