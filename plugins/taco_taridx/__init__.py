"""taco_gdal container plugin for TARIDX indexes over (webdataset-style) tar shards.

``taco_gdal.load("train.taridx")`` opens the index through the entry point
``taco_gdal.containers: taridx``; every indexed member becomes a FILE sample
read straight from its shard.  :func:`write_taridx` indexes tar shards,
:func:`tar_to_taco` converts them into a TACO ZIP.  The byte layout is in
:mod:`taco_taridx.layout`, the key hash in :mod:`taco_taridx.xxh64`.
"""

from __future__ import annotations

from taco_taridx.container import TarIdxContainer, read_taridx
from taco_taridx.convert import tar_to_taco
from taco_taridx.layout import TaridxFormatError, TaridxHeader, TaridxIndex
from taco_taridx.write import build_index, write_taridx
from taco_taridx.xxh64 import xxh64

__all__ = [
    "TarIdxContainer",
    "TaridxFormatError",
    "TaridxHeader",
    "TaridxIndex",
    "build_index",
    "read_taridx",
    "tar_to_taco",
    "write_taridx",
    "xxh64",
]
