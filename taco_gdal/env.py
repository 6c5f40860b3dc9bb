"""Scoped GDAL configuration.

taco_gdal never sets a GDAL configuration option process-wide.  ``Env`` sets
options *thread-locally* (``CPLSetThreadLocalConfigOption``) for the duration of
a ``with`` block and restores the previous thread-local values on exit, the way
``rasterio.Env`` does.  Because the osgeo bindings, rasterio and pyogrio share
one libgdal (see ``scripts/setup.sh``), options set here are seen by
``rasterio.open`` and ``gdal.Open`` called inside the block on the same thread.

``Env()`` without options carries taco_gdal's read profile, so a user's own
``rasterio.open(path)`` of a sample path inside the block costs one GET for a
sample of up to 8 MB (see :func:`taco_gdal.io.profile.env_profile`).
``Env(**options)`` sets exactly ``options`` (how taco_gdal itself uses it);
``Env(read_profile=True, **options)`` sets both, ``options`` winning.

Importing this module registers taco_gdal's after-fork handler
(:mod:`taco_gdal._fork`); it sets no GDAL option.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from types import TracebackType

from taco_gdal import _fork  # noqa: F401  (registers the after-fork reset)
from taco_gdal._osgeo import gdal

__all__ = ["Env", "config_options", "get_config", "thread_options"]

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
            (:func:`~taco_gdal.io.profile.env_profile`: no directory listing on
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
        from taco_gdal.io.profile import env_profile  # the profile module imports this one

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
