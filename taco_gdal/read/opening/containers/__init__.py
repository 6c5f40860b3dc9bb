"""Container formats the reader opens: ZIP, FOLDER, TACOCAT, and plugins."""

from __future__ import annotations

from taco_gdal.read.opening.containers.base import Container, Probe, VsiRule

__all__ = ["Container", "Probe", "VsiRule"]
