"""Integrity checks on existing datasets: :func:`verify` (bytes) and :func:`validate` (rules).

Importing a submodule binds this package as ``taco_gdal.verify``, so the
package is made callable: calling it calls :func:`verify`.

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
