"""The writer's name for :mod:`taco_gdal._memory` (shared with the reader)."""

from __future__ import annotations

from taco_gdal._memory import release_memory

__all__ = ["release_memory"]
