"""taco_gdal container plugin for TACO v1: tacotoolbox 0.5 ``.taco`` and pytortilla ``.tortilla``.

``taco_gdal.load("x.taco")`` opens a v1 file through the entry point
``taco_gdal.containers: taco_v1``; samples are ``/vsisubfile/`` ranges of the
file, as tacoreader 0.6 built them.  The byte layout is in :mod:`taco_v1.layout`.
"""

from __future__ import annotations

from taco_v1.container import TacoV1Container
from taco_v1.layout import V1FormatError, V1Header, parse_header

__all__ = ["TacoV1Container", "V1FormatError", "V1Header", "parse_header"]
