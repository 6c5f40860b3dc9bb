"""Suite-wide fixtures.  Subfolders add their own conftest.py for their fixtures."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HYPOTHESIS_PROFILE", "ci")

try:
    from hypothesis import HealthCheck, settings

    settings.register_profile(
        "ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )
    settings.load_profile(os.environ["HYPOTHESIS_PROFILE"])
except ImportError:  # pragma: no cover - hypothesis is a test requirement
    pass


@pytest.fixture
def vsimem_dir(request: pytest.FixtureRequest) -> str:
    """A unique /vsimem/ folder, emptied after the test."""
    from osgeo import gdal

    root = f"/vsimem/{request.node.name}-{id(request)}"
    yield root
    for name in gdal.ReadDirRecursive(root) or []:
        gdal.Unlink(f"{root}/{name}")
