"""Pin remote containers: remember size and ETag, refuse to read a changed file.

Offsets in TACO metadata are only valid for the exact bytes they were computed
from.  If the file behind a URL is replaced (a new upload, a moving
``resolve/main`` link), reading ``/vsisubfile/{offset}_{size},...`` would return
bytes from the wrong place without any error.  So the first time taco_gdal
touches a remote container it records a :class:`Pin` (size, and ETag when the
server sends one); every later touch compares.

The comparison costs no request in the common case: while GDAL's own cache
still knows the file's size, that size is compared (``VSI_STAT_CACHE_ONLY``).
When GDAL has to ask the server again (new process, cache cleared or evicted),
:func:`fetch_pin` asks instead (``VSIGetFileMetadata(..., "HEADERS")``: one HEAD
over HTTP, one ranged GET on S3), which also fills GDAL's cache, so the request
GDAL would have made anyway is the one that checks size *and* ETag.

Example:
    >>> from taco_gdal.io import pinning
    >>> pinning.verify("/vsicurl/https://host/data.tacozip")  # doctest: +SKIP
    Pin(path='/vsicurl/https://host/data.tacozip', size=81234567, etag='"5f3a-1c"')
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from osgeo import gdal

from taco_gdal.errors import TacoChangedError, TacoIOError
from taco_gdal.format.vsi import SUBFILE_PREFIX, is_remote, parse_subfile
from taco_gdal.io.profile import metadata_env

__all__ = ["Pin", "PinRegistry", "container_of", "fetch_pin", "pins", "verify"]


@dataclass(frozen=True, slots=True)
class Pin:
    """What a remote container looked like when its metadata was read."""

    path: str
    size: int
    etag: str | None


def container_of(vsi_path: str) -> str:
    """The file that holds the bytes of ``vsi_path`` (the inside of ``/vsisubfile/``)."""
    while vsi_path.startswith(SUBFILE_PREFIX):
        vsi_path = parse_subfile(vsi_path).container
    return vsi_path


class PinRegistry:
    """A thread-safe map from container path to :class:`Pin`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pins: dict[str, Pin] = {}

    def get(self, path: str) -> Pin | None:
        with self._lock:
            return self._pins.get(path)

    def record(self, pin: Pin) -> Pin:
        """Keep ``pin`` unless one is already recorded; return the one kept."""
        with self._lock:
            return self._pins.setdefault(pin.path, pin)

    def forget(self, path: str | None = None) -> None:
        """Drop the pin of ``path`` (all pins if ``None``), e.g. to accept a new upload."""
        with self._lock:
            if path is None:
                self._pins.clear()
            else:
                self._pins.pop(path, None)


pins = PinRegistry()
"""The process-wide registry used by :func:`verify` when no pin is passed."""


def _cached_size(path: str) -> int | None:
    stat = gdal.VSIStatL(path, gdal.VSI_STAT_CACHE_ONLY | gdal.VSI_STAT_SIZE_FLAG)
    return None if stat is None else int(stat.size)


def fetch_pin(path: str) -> Pin:
    """Ask the server for the size and ETag of ``path`` (one request).

    Raises:
        TacoIOError: the server does not answer, or the file does not exist.
    """
    gdal.ErrorReset()
    with metadata_env():
        try:
            headers = gdal.GetFileMetadata(path, "HEADERS") or {}
        except RuntimeError as exc:
            raise TacoIOError(f"cannot read the HTTP headers of {path!r}: {exc}") from exc
        size = _cached_size(path)
    if size is None:
        gdal.VSICurlPartialClearCache(path)
        detail = gdal.GetLastErrorMsg()
        raise TacoIOError(
            f"{path!r} does not exist or cannot be reached (no size in its headers)"
            f"{': ' + detail if detail else ''}"
        )
    etag = {k.lower(): v for k, v in headers.items()}.get("etag")
    return Pin(path, size, etag)


def _changed(pin: Pin, size: int, etag: str | None) -> TacoChangedError:
    gdal.VSICurlPartialClearCache(pin.path)  # keep no block of the new version: ask again next time
    found = f"size {size}" + (f", ETag {etag}" if etag is not None else "")
    pinned = f"size {pin.size}" + (f", ETag {pin.etag}" if pin.etag is not None else "")
    return TacoChangedError(
        f"{pin.path} changed after its metadata was read: expected {pinned}, found {found}; "
        f"the stored offsets no longer apply, load the dataset again"
    )


def verify(path: str, expected: Pin | None = None, registry: PinRegistry = pins) -> Pin | None:
    """Check that the remote container of ``path`` is the one that was pinned.

    The first call for a container records its pin (with the ETag, except when
    GDAL already knew the size: then the pin is taken from GDAL's cache, size
    only, without a request); later calls compare with it (or with
    ``expected``).  Local files are not pinned (``None`` is returned).

    Raises:
        TacoChangedError: the size or the ETag differs from the pin.
        TacoIOError: the container cannot be reached.
    """
    container = container_of(path)
    if not is_remote(container):
        return None
    pin = expected if expected is not None else registry.get(container)
    size = _cached_size(container)
    if pin is None:
        if size is not None:  # GDAL has asked the server already: pin what it knows, for free
            return registry.record(Pin(container, size, None))
        return registry.record(fetch_pin(container))
    if size is not None:  # GDAL still trusts its cached size: compare that, no request
        if size != pin.size:
            raise _changed(pin, size, None)
        return pin
    current = fetch_pin(container)
    etags_differ = pin.etag is not None and current.etag is not None and pin.etag != current.etag
    if current.size != pin.size or etags_differ:
        raise _changed(pin, current.size, current.etag)
    return pin
