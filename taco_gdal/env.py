"""Scoped GDAL configuration.

taco_gdal never sets a GDAL configuration option process-wide.  ``Env`` sets
options *thread-locally* (``CPLSetThreadLocalConfigOption``) for the duration of
a ``with`` block and restores the previous thread-local values on exit, the way
``rasterio.Env`` does.  Because the osgeo bindings, rasterio and pyogrio share
one libgdal (see ``scripts/setup.sh``), options set here are seen by
``rasterio.open`` and ``gdal.Open`` called inside the block on the same thread.

``Env()`` without options carries taco_gdal's read profile, so a user's own
``rasterio.open(path)`` of a sample path inside the block costs one GET for a
sample of up to 8 MB (see :func:`env_profile`).
``Env(**options)`` sets exactly ``options`` (how taco_gdal itself uses it);
``Env(read_profile=True, **options)`` sets both, ``options`` winning.

The read profile, applied thread-locally through ``Env``:

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

Importing this module registers taco_gdal's after-fork handler
(:mod:`taco_gdal._fork`); it sets no GDAL option.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from types import TracebackType
from typing import Final

from taco_gdal import _fork  # noqa: F401  (registers the after-fork reset)
from taco_gdal._osgeo import gdal
from taco_gdal.format.names import LOCAL_META, TACOCAT_FILE, ZIP_SUFFIXES

__all__ = [
    "INGEST_LIMIT",
    "METADATA_SUFFIXES",
    "Env",
    "config_options",
    "env_profile",
    "get_config",
    "network_options",
    "read_profile",
    "thread_options",
]

_state = threading.local()


def _stack() -> list[tuple[dict[str, str | None], dict[str, str | None]]]:
    """This thread's open ``Env`` blocks: (values saved on entry, values applied)."""
    stack: list[tuple[dict[str, str | None], dict[str, str | None]]] | None
    stack = getattr(_state, "stack", None)
    if stack is None:
        stack = []
        _state.stack = stack
    return stack


def _as_config_value(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "YES" if value else "NO"
    return str(value)


class Env:
    """Thread-local GDAL configuration options for the span of a ``with`` block.

    Args:
        read_profile: apply taco_gdal's read profile
            (:func:`env_profile`: no directory listing on
            open, retries, and ``GDAL_INGESTED_BYTES_AT_OPEN`` = 8 MB so that a
            sample of up to 8 MB opens with one GET).  Default: only when no
            option is given.  Options already set by the user (process-wide or
            in an enclosing block) win over the profile, explicit ``options``
            win over everything.  In a profiled block *every* dataset GDAL
            opens reads up to 8 MB at open (a whole small file, the first 8 MB
            of a large COG): right for samples, wasteful for a big remote
            raster read a tile at a time; open those outside the block or with
            ``Env(GDAL_INGESTED_BYTES_AT_OPEN=None)`` nested inside it.
        options: GDAL config options, e.g. ``GDAL_HTTP_MAX_RETRY=3``.  ``True`` and
            ``False`` become ``YES``/``NO``; ``None`` unsets an option for the block.

    Example:
        >>> import taco_gdal
        >>> from taco_gdal.env import get_config
        >>> with taco_gdal.Env(GDAL_DISABLE_READDIR_ON_OPEN="EMPTY_DIR"):
        ...     get_config("GDAL_DISABLE_READDIR_ON_OPEN")
        'EMPTY_DIR'
        >>> with taco_gdal.Env():
        ...     get_config("GDAL_INGESTED_BYTES_AT_OPEN")
        '8388608'
    """

    def __init__(self, read_profile: bool | None = None, **options: object) -> None:
        self.options: dict[str, str | None] = {
            key: _as_config_value(value) for key, value in options.items()
        }
        self.read_profile = not options if read_profile is None else read_profile

    def _applied(self) -> dict[str, str | None]:
        if not self.read_profile:
            return dict(self.options)
        applied: dict[str, str | None] = dict(env_profile())
        applied.update(self.options)
        return applied

    def __enter__(self) -> Env:
        saved: dict[str, str | None] = {}
        applied = self._applied()
        for key, value in applied.items():
            saved[key] = gdal.GetThreadLocalConfigOption(key, None)
            gdal.SetThreadLocalConfigOption(key, value)
        _stack().append((saved, applied))
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        saved, _ = _stack().pop()
        for key, value in saved.items():
            gdal.SetThreadLocalConfigOption(key, value)


@contextmanager
def config_options(options: Mapping[str, object]) -> Iterator[None]:
    """Functional form of :class:`Env` for a mapping of options."""
    with Env(read_profile=False, **dict(options)):
        yield


def thread_options() -> dict[str, str | None]:
    """The options that the ``Env`` blocks open on this thread applied (innermost wins).

    Another thread sees none of them: a worker thread that must read as this
    thread reads enters ``config_options(thread_options())`` taken here.

    Example:
        >>> with Env(GDAL_HTTP_MAX_RETRY=3):
        ...     thread_options()
        {'GDAL_HTTP_MAX_RETRY': '3'}
        >>> thread_options()
        {}
    """
    merged: dict[str, str | None] = {}
    for _, applied in _stack():
        merged.update(applied)
    return merged


def get_config(key: str, default: str | None = None) -> str | None:
    """Return the effective value of a GDAL config option on this thread."""
    value = gdal.GetConfigOption(key, None)
    return default if value is None else value


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
