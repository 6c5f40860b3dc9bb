"""Deprecated: moved to :mod:`taco_gdal.read.opening.containers.zip`."""

from __future__ import annotations

from taco_gdal._moved import moved_module

moved_module(__name__, "taco_gdal.read.opening.containers.zip")
