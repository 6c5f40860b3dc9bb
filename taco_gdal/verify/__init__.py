"""Integrity checks on existing datasets: :func:`verify` (bytes) and :func:`validate` (rules).

``taco_gdal.verify`` is both this package and the function: importing a
submodule binds the package as an attribute of ``taco_gdal``, so the package
itself is made callable and calling it is calling :func:`verify`.

Example:
    >>> from taco_gdal.verify import verify
    >>> verify("dataset.tacozip", level="full").ok
    True
"""

from __future__ import annotations

import sys
import types
from typing import Any

from taco_gdal.verify._validate import validate
from taco_gdal.verify._verify import verify
from taco_gdal.verify.report import Failure, Report

__all__ = ["Failure", "Report", "validate", "verify"]


class _CallableModule(types.ModuleType):
    """``taco_gdal.verify(path, ...)`` works whether the name is the package or the function."""

    def __call__(self, *args: Any, **kwargs: Any) -> Report:
        return verify(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
