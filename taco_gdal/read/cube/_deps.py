"""The ``xarray`` extra: xarray, dask and odc-geo, imported when a cube is first built."""

from __future__ import annotations

import importlib
from types import ModuleType

from taco_gdal.errors import TacoDependencyError

__all__ = ["require"]

INSTALL = "pip install 'taco_gdal[xarray]'"
"""What a user without the extra runs to get it."""


def require(module: str, feature: str = "to_xarray()") -> ModuleType:
    """Import ``module`` (e.g. ``"xarray"``); a TacoDependencyError says how to install it.

    Example:
        >>> require("xarray").__name__
        'xarray'
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise TacoDependencyError(
            f"{feature} expected the package {module!r} (the xarray extra), found it missing: "
            f"{INSTALL}"
        ) from exc
