"""Container formats the reader opens: ZIP, FOLDER, TACOCAT, and plugins."""

from __future__ import annotations

from taco_gdal.read.containers.base import Container, Probe, VsiRule

__all__ = ["Container", "Probe", "VsiRule"]
