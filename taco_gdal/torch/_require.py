"""torch is an optional extra: import it, or say how to install it."""

from __future__ import annotations

from types import ModuleType

from taco_gdal.errors import TacoDependencyError

__all__ = ["require_torch"]

INSTALL_HINT = "pip install 'taco_gdal[torch]'  (torch==2.13.0, CPU build)"


def require_torch() -> ModuleType:
    """The ``torch`` module, or a TacoDependencyError saying how to install it."""
    try:
        import torch
    except ImportError as exc:
        raise TacoDependencyError(
            f"taco_gdal.torch needs PyTorch: expected an importable 'torch' module, found "
            f"none ({exc}); install it with: {INSTALL_HINT}"
        ) from exc
    return torch
