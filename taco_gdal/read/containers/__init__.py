"""Deprecated: moved to :mod:`taco_gdal.read.opening.containers`.

A plugin imports :mod:`taco_gdal.containers`.
"""

from __future__ import annotations

import warnings

from taco_gdal.read.opening.containers import Container, Probe, VsiRule

warnings.warn(
    "taco_gdal.read.containers is deprecated: it moved to taco_gdal.read.opening.containers "
    "(a plugin imports taco_gdal.containers)",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = ["Container", "Probe", "VsiRule"]
