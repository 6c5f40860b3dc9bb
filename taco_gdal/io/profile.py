"""The GDAL read profile: the options taco_gdal applies around every remote read.

Two groups of options, both applied thread-locally through :class:`taco_gdal.Env`:

* :func:`network_options` for every read, metadata included: retries with
  exponential back-off on HTTP 429/500/502/503/504 (``GDAL_HTTP_MAX_RETRY``,
  ``GDAL_HTTP_RETRY_DELAY``; ``GDAL_HTTP_RETRY_CODES`` only exists from GDAL
  3.10 and is set only there), an abort for stalled transfers
  (``GDAL_HTTP_CONNECTTIMEOUT``, ``GDAL_HTTP_LOW_SPEED_TIME``/``_LIMIT``), no
  directory listing on open (``GDAL_DISABLE_READDIR_ON_OPEN=EMPTY_DIR``), and
  the TACO file names appended to ``CPL_VSIL_CURL_ALLOWED_EXTENSIONS`` when the
  user restricted it (otherwise GDAL reports every container as missing).
* :func:`read_profile` for opening one sample: the above plus
  ``GDAL_INGESTED_BYTES_AT_OPEN`` = the sample's size when it is at most
  :data:`INGEST_LIMIT`, so GDAL fetches the whole sample with one GET instead of
  a 16 KiB header read followed by growing read-ahead requests.
* :func:`env_profile` for a user's ``with taco_gdal.Env():`` block, where the
  sizes are unknown: the network options plus ``GDAL_INGESTED_BYTES_AT_OPEN`` =
  :data:`INGEST_LIMIT`.  GDAL reads ``min(that, file size)`` at open, and a
  ``/vsisubfile/`` path is exactly as large as its sample, so a plain
  ``rasterio.open(path)`` of a sample of up to 8 MB is one GET.

Options the user already set (process-wide or in an enclosing ``Env``) win,
except ``GDAL_INGESTED_BYTES_AT_OPEN``, which is per sample by nature.
``CPL_VSIL_CURL_USE_HEAD`` is never touched: on GDAL 3.6 ``NO`` downloads whole
containers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from taco_gdal._osgeo import gdal
from taco_gdal.env import Env, get_config
from taco_gdal.format.names import LOCAL_META, TACOCAT_FILE, ZIP_SUFFIXES

__all__ = [
    "INGEST_LIMIT",
    "METADATA_SUFFIXES",
    "env_profile",
    "metadata_env",
    "network_options",
    "read_profile",
    "sample_env",
]

INGEST_LIMIT: Final = 8 * 1024 * 1024
"""Largest sample read whole at open (bytes); larger samples are read tile by tile."""

METADATA_SUFFIXES: Final = (*ZIP_SUFFIXES, ".parquet", ".json", LOCAL_META, TACOCAT_FILE)
"""File-name endings taco_gdal itself reads: containers and metadata files."""

_GDAL_3_10: Final = 3_10_00_00
_ALLOWED: Final = "CPL_VSIL_CURL_ALLOWED_EXTENSIONS"
_RETRY_CODES: Final = "429,500,502,503,504"
_DEFAULTS: Final[dict[str, str]] = {
    "GDAL_DISABLE_READDIR_ON_OPEN": "EMPTY_DIR",
    "GDAL_HTTP_MAX_RETRY": "4",
    "GDAL_HTTP_RETRY_DELAY": "0.5",
    "GDAL_HTTP_CONNECTTIMEOUT": "30",
    "GDAL_HTTP_LOW_SPEED_TIME": "60",
    "GDAL_HTTP_LOW_SPEED_LIMIT": "1",
}


def _gdal_version() -> int:
    return int(gdal.VersionInfo("VERSION_NUM"))


def _allowed_extensions(extra: Iterable[str]) -> str | None:
    """The user's extension list with ``extra`` appended, or ``None`` if unrestricted."""
    current = get_config(_ALLOWED)
    if not current:
        return None
    names = [n.strip() for n in current.split(",") if n.strip()]
    lowered = {n.lower() for n in names}
    names += [e for e in extra if e.lower() not in lowered]
    return ",".join(names)


def network_options(suffixes: Iterable[str] = ZIP_SUFFIXES) -> dict[str, str]:
    """Retry, timeout and listing options for any remote read, minus what the user set.

    Args:
        suffixes: file-name endings to allow when ``CPL_VSIL_CURL_ALLOWED_EXTENSIONS``
            is restricted (containers by default; :data:`METADATA_SUFFIXES` for
            metadata reads).

    Example:
        >>> network_options()["GDAL_DISABLE_READDIR_ON_OPEN"]
        'EMPTY_DIR'
    """
    options = {k: v for k, v in _DEFAULTS.items() if get_config(k) is None}
    if _gdal_version() >= _GDAL_3_10 and get_config("GDAL_HTTP_RETRY_CODES") is None:
        options["GDAL_HTTP_RETRY_CODES"] = _RETRY_CODES
    allowed = _allowed_extensions(suffixes)
    if allowed is not None:
        options[_ALLOWED] = allowed
    return options


def read_profile(size: int | None = None) -> dict[str, str]:
    """GDAL options for opening one sample of ``size`` bytes.

    Args:
        size: the sample's size in bytes (``internal:size``); ``None`` or a size
            above :data:`INGEST_LIMIT` leaves GDAL's header-first reading alone.

    Example:
        >>> read_profile(400_000)["GDAL_INGESTED_BYTES_AT_OPEN"]
        '400000'
        >>> "GDAL_INGESTED_BYTES_AT_OPEN" in read_profile(None)
        False
    """
    options = network_options()
    if size is not None and 0 < size <= INGEST_LIMIT:
        options["GDAL_INGESTED_BYTES_AT_OPEN"] = str(size)
    return options


def env_profile() -> dict[str, str]:
    """GDAL options ``taco_gdal.Env()`` applies: :func:`network_options` and an 8 MB ingest.

    ``GDAL_INGESTED_BYTES_AT_OPEN`` = :data:`INGEST_LIMIT` unless the user set
    it: every open in the block reads up to 8 MB at once, which is the whole of
    a sample up to that size (one GET) but also the first 8 MB of any larger
    file opened there.

    Example:
        >>> env_profile()["GDAL_INGESTED_BYTES_AT_OPEN"]
        '8388608'
    """
    options = network_options()
    if get_config("GDAL_INGESTED_BYTES_AT_OPEN") is None:
        options["GDAL_INGESTED_BYTES_AT_OPEN"] = str(INGEST_LIMIT)
    return options


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
        >>> with metadata_env():
        ...     get_config("GDAL_DISABLE_READDIR_ON_OPEN") is not None
        True
    """
    return Env(read_profile=False, **network_options(METADATA_SUFFIXES))
