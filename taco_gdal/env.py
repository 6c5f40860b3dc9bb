"""Scoped GDAL configuration.

taco_gdal never sets a GDAL configuration option process-wide.  ``Env`` sets
options *thread-locally* (``CPLSetThreadLocalConfigOption``) for the duration of
a ``with`` block and restores the previous thread-local values on exit, the way
``rasterio.Env`` does.  Because the osgeo bindings, rasterio and pyogrio share
one libgdal (see ``scripts/setup.sh``), options set here are seen by
``rasterio.open`` and ``gdal.Open`` called inside the block on the same thread.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from types import TracebackType

from osgeo import gdal

__all__ = ["Env", "config_options", "get_config"]

_state = threading.local()


def _stack() -> list[dict[str, str | None]]:
    stack: list[dict[str, str | None]] | None = getattr(_state, "stack", None)
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
        options: GDAL config options, e.g. ``GDAL_HTTP_MAX_RETRY=3``.  ``True`` and
            ``False`` become ``YES``/``NO``; ``None`` unsets an option for the block.

    Example:
        >>> import taco_gdal
        >>> with taco_gdal.Env(GDAL_DISABLE_READDIR_ON_OPEN="EMPTY_DIR"):
        ...     taco_gdal.get_config("GDAL_DISABLE_READDIR_ON_OPEN")
        'EMPTY_DIR'
    """

    def __init__(self, **options: object) -> None:
        self.options: dict[str, str | None] = {
            key: _as_config_value(value) for key, value in options.items()
        }

    def __enter__(self) -> Env:
        saved: dict[str, str | None] = {}
        for key, value in self.options.items():
            saved[key] = gdal.GetThreadLocalConfigOption(key, None)
            gdal.SetThreadLocalConfigOption(key, value)
        _stack().append(saved)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        saved = _stack().pop()
        for key, value in saved.items():
            gdal.SetThreadLocalConfigOption(key, value)


@contextmanager
def config_options(options: Mapping[str, object]) -> Iterator[None]:
    """Functional form of :class:`Env` for a mapping of options."""
    with Env(**dict(options)):
        yield


def get_config(key: str, default: str | None = None) -> str | None:
    """Return the effective value of a GDAL config option on this thread."""
    value = gdal.GetConfigOption(key, None)
    return default if value is None else value
