"""GDAL's Python module, imported when first used rather than with taco_gdal.

``from osgeo import gdal`` is a sizeable part of a cold start, and loading a
local dataset never calls GDAL; ``gdal`` here imports it on first attribute
access and forwards every access to it.

Example:
    >>> from taco_gdal._osgeo import gdal
    >>> gdal.VersionInfo("VERSION_NUM") >= "3060000"
    True
"""

from __future__ import annotations

import importlib
import threading
from types import ModuleType
from typing import Any

__all__ = ["gdal"]


class _LazyModule:
    """Stands for a module; imports it on the first attribute access."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None
        self._lock = threading.Lock()

    def _load(self) -> ModuleType:
        with self._lock:
            if self._module is None:
                self._module = importlib.import_module(self._name)
            return self._module

    def __getattr__(self, attribute: str) -> Any:
        module = self._module or self._load()
        return getattr(module, attribute)


gdal: Any = _LazyModule("osgeo.gdal")
