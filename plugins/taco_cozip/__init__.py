"""taco_gdal container plugin for CoZIP: TACO 3.0.0 archives, flat archives, TACO 3 TACOCAT.

``taco_gdal.load("dataset.zip")`` opens a TACO 3 archive written by taco-eo
through the entry point ``taco_gdal.containers: taco3``; the byte layout is in
:mod:`taco_cozip.layout`, the mapping of TACO 3 levels to ``level0..N`` in
:mod:`taco_cozip.levels`.  taco_gdal reads and validates TACO 3; it does not
write it (the TACO 3 spec asks that only its own package writes v3).
"""

from __future__ import annotations

from taco_cozip.container import CozipFlatContainer, Taco3CatContainer, Taco3Container
from taco_cozip.layout import CozipFormatError, CozipIndex, parse_header, parse_index

__all__ = [
    "CozipFlatContainer",
    "CozipFormatError",
    "CozipIndex",
    "Taco3CatContainer",
    "Taco3Container",
    "parse_header",
    "parse_index",
]
