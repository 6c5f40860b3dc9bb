"""Metadata extensions: declare an Arrow schema, compute rows (spec 7.1.2)."""

from __future__ import annotations

from taco_gdal.extensions.base import (
    Extension,
    SampleExtension,
    TacoExtension,
    TortillaExtension,
)

__all__ = ["Extension", "SampleExtension", "TacoExtension", "TortillaExtension"]
