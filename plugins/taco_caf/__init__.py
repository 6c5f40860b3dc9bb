"""taco_gdal container plugin for the Chunk Archive Format (CAF 1.0).

``taco_gdal.load("x.caf")`` opens an archive through the entry point
``taco_gdal.containers: caf``; :func:`write_caf` writes one; :func:`caf_to_taco`
converts one into a TACO ZIP.  The byte layout is in :mod:`taco_caf.layout`.
"""

from __future__ import annotations

from taco_caf.container import CafContainer, read_index
from taco_caf.convert import caf_to_taco
from taco_caf.layout import CafFormatError, CafIndex, CafMember
from taco_caf.write import write_caf

__all__ = [
    "CafContainer",
    "CafFormatError",
    "CafIndex",
    "CafMember",
    "caf_to_taco",
    "read_index",
    "write_caf",
]
