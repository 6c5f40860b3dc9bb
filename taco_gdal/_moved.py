"""Deprecated import paths of modules that moved: they still import, and say where to now."""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

__all__ = ["moved_module", "moved_names"]


def moved_module(old: str, new: str) -> ModuleType:
    """Make ``old`` the module ``new`` (same object) and warn that it moved."""
    warnings.warn(
        f"{old} is deprecated: it moved to {new}; import it from there",
        DeprecationWarning,
        stacklevel=3,
    )
    module = importlib.import_module(new)
    sys.modules[old] = module
    return module


def moved_names(old: str, new: str, names: Iterable[str]) -> Callable[[str], Any]:
    """A package ``__getattr__`` giving ``names`` of module ``old`` from ``new``, with a warning."""
    known = frozenset(names)

    def __getattr__(name: str) -> Any:
        if name not in known:
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        warnings.warn(
            f"{old}.{name} is deprecated: it moved to {new}.{name}; import it from there",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(new), name)

    return __getattr__
