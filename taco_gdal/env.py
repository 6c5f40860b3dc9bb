"""Scoped GDAL configuration: ``Env`` sets options thread-locally for a ``with`` block.

Like ``rasterio.Env``, and seen by rasterio and ``gdal.Open`` (one shared libgdal);
nothing is ever set process-wide. ``Env()`` without options applies the read
profile (:func:`env_profile`), where options the user already set win.
``CPL_VSIL_CURL_USE_HEAD`` is never touched: on GDAL 3.6 ``NO`` downloads whole
containers. Importing this module registers the after-fork handler.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
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
    stack: list[tuple[dict[str, str | None], dict[str, str | None]]]
    stack = _state.__dict__.setdefault("stack", [])
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
        read_profile: apply :func:`env_profile` (retries, no directory listing,
            ``GDAL_INGESTED_BYTES_AT_OPEN`` = 8 MB so a small sample opens with one
            GET). Default: only when no option is given. Every dataset opened in a
            profiled block reads up to 8 MB at open; open a big tiled raster outside
            it or with ``Env(GDAL_INGESTED_BYTES_AT_OPEN=None)`` nested inside.
        options: GDAL config options; ``True``/``False`` become ``YES``/``NO``,
            ``None`` unsets an option for the block.

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
        profile = env_profile() if self.read_profile else {}
        return {**profile, **self.options}

    def __enter__(self) -> Env:
        saved: dict[str, str | None] = {}
        applied = self._applied()
        for key, value in applied.items():
            saved[key] = gdal.GetThreadLocalConfigOption(key, None)
            gdal.SetThreadLocalConfigOption(key, value)
        _stack().append((saved, applied))
        return self

    def __exit__(self, *exc: object) -> None:
        saved, _ = _stack().pop()
        for key, value in saved.items():
            gdal.SetThreadLocalConfigOption(key, value)


@contextmanager
def config_options(options: Mapping[str, object]) -> Iterator[None]:
    """Functional form of :class:`Env` for a mapping of options."""
    with Env(read_profile=False, **dict(options)):
        yield


def thread_options() -> dict[str, str | None]:
    """The options the ``Env`` blocks open on this thread applied (innermost wins).

    A worker thread that must read as this thread reads enters
    ``config_options(thread_options())`` taken here.

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
        suffixes: endings appended to ``CPL_VSIL_CURL_ALLOWED_EXTENSIONS`` when the
            user restricted it (otherwise GDAL reports every container missing).

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

    Up to :data:`INGEST_LIMIT`, ``GDAL_INGESTED_BYTES_AT_OPEN`` = ``size`` makes
    GDAL fetch the whole sample with one GET.

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

    Sizes are unknown here, but a ``/vsisubfile/`` path is as large as its sample,
    so GDAL reads ``min(8 MB, size)`` at open: one GET for a small sample.

    Example:
        >>> env_profile()["GDAL_INGESTED_BYTES_AT_OPEN"]
        '8388608'
    """
    options = network_options()
    if get_config("GDAL_INGESTED_BYTES_AT_OPEN") is None:
        options["GDAL_INGESTED_BYTES_AT_OPEN"] = str(INGEST_LIMIT)
    return options
