"""QGIS plugin: add a TACO dataset as a footprint layer through the ``taco`` command.

Install by copying this folder into the profile's ``python/plugins`` folder.
"""

from __future__ import annotations

from typing import Any


def classFactory(iface: Any) -> Any:
    """Called by QGIS to create the plugin."""
    from .plugin import TacoPlugin

    return TacoPlugin(iface)
