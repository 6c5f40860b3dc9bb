"""The GDAL read profile as ``Env`` blocks: one sample's, and taco_gdal's metadata reads.

The options are computed in :mod:`taco_gdal.env` (``Env()`` applies them itself);
they are re-exported here, where the reader imports them.
"""

from __future__ import annotations

from taco_gdal.env import (
    INGEST_LIMIT,
    METADATA_SUFFIXES,
    Env,
    env_profile,
    network_options,
    read_profile,
)

__all__ = [
    "INGEST_LIMIT",
    "METADATA_SUFFIXES",
    "env_profile",
    "metadata_env",
    "network_options",
    "read_profile",
    "sample_env",
]


def sample_env(size: int | None = None) -> Env:
    """An :class:`~taco_gdal.Env` holding :func:`read_profile` for one sample.

    Example:
        >>> import rasterio
        >>> rows = taco_gdal.load(url).frame(internal=True)  # url: a server on 127.0.0.1
        >>> path, size = rows["internal:gdal_vsi"].iloc[0], int(rows["internal:size"].iloc[0])
        >>> path
        '/vsisubfile/..._622,/vsicurl/http://127.0.0.1:.../dataset.tacozip'
        >>> with sample_env(size):
        ...     with rasterio.open(path) as src:
        ...         src.read().shape
        (1, 16, 16)
    """
    return Env(read_profile=False, **read_profile(size))


def metadata_env() -> Env:
    """An :class:`~taco_gdal.Env` for taco_gdal's own metadata reads (no ingest size).

    Example:
        >>> from taco_gdal.env import get_config
        >>> with metadata_env():
        ...     get_config("GDAL_DISABLE_READDIR_ON_OPEN") is not None
        True
    """
    return Env(read_profile=False, **network_options(METADATA_SUFFIXES))
