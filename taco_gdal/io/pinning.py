"""Pin remote containers: remember size and ETag, refuse to read a changed file.

Stored offsets are valid only for the bytes they were computed from. The first
touch of a remote container records a :class:`Pin`; later touches compare it
with GDAL's cached size (no request) or one HEAD, and fetches inside
:func:`conditions` carry ``If-Match``/``If-Unmodified-Since`` so a replaced file
answers 412 instead of wrong bytes. Without ETag or Last-Modified only a size
change is caught; the per-sample digest catches the rest.

Example:
    >>> from taco_gdal.io import pinning
    >>> url  # dataset.tacozip on a Range server on 127.0.0.1
    'http://127.0.0.1:.../dataset.tacozip'
    >>> pinning.verify("/vsicurl/" + url)
    Pin(path='/vsicurl/http://127.0.0.1:.../dataset.tacozip', size=..., etag='"..."', ...)
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from taco_gdal._fork import after_fork_in_child
from taco_gdal._osgeo import gdal
from taco_gdal.errors import TacoChangedError, TacoIOError
from taco_gdal.format.vsi import SUBFILE_PREFIX, is_remote, parse_subfile
from taco_gdal.io.profile import metadata_env

__all__ = [
    "Pin",
    "PinRegistry",
    "conditions",
    "container_of",
    "fetch_pin",
    "pins",
    "raise_if_changed",
    "verify",
]


@dataclass(frozen=True, slots=True)
class Pin:
    """What a remote container looked like when its metadata was read."""

    path: str
    size: int
    etag: str | None
    last_modified: str | None = None

    def describe(self) -> str:
        parts = [("size", self.size), ("ETag", self.etag), ("Last-Modified", self.last_modified)]
        return ", ".join(f"{name} {value}" for name, value in parts if value is not None)


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

    def reset_lock(self) -> None:
        """A new lock (in a forked child: the parent may have held it while forking)."""
        self._lock = threading.Lock()

    def forget(self, path: str | None = None) -> None:
        """Drop the pin of ``path`` (all pins if ``None``), e.g. to accept a new upload."""
        with self._lock:
            if path is None:
                self._pins.clear()
            else:
                self._pins.pop(path, None)


pins = PinRegistry()
"""The process-wide registry used by :func:`verify` when no pin is passed."""
# A forked child keeps the parent's pins (they identify the files it reads) but not the lock.
after_fork_in_child(pins.reset_lock)


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
    lower = {k.lower(): v for k, v in headers.items()}
    return Pin(path, size, lower.get("etag"), lower.get("last-modified"))


def _what_changed(pin: Pin, current: Pin) -> list[str]:
    changes = [] if current.size == pin.size else [f"size {pin.size} -> {current.size}"]
    for name, old, new in (
        ("ETag", pin.etag, current.etag),
        ("Last-Modified", pin.last_modified, current.last_modified),
    ):
        if old is not None and new is not None and old != new:
            changes.append(f"{name} {old} -> {new}")
    return changes


def _changed(pin: Pin, current: Pin, changes: list[str] | None = None) -> TacoChangedError:
    gdal.VSICurlPartialClearCache(pin.path)  # keep no block of the new version: ask again next time
    what = changes if changes is not None else _what_changed(pin, current)
    return TacoChangedError(
        f"{pin.path} changed after its metadata was read ({'; '.join(what) or 'content'}): "
        f"expected {pin.describe()}, found {current.describe()}; the stored offsets no longer "
        "apply, load the dataset again"
    )


def _quoted(header: str) -> str:
    """One ``GDAL_HTTP_HEADERS`` item: quoted, inner quotes escaped (GDAL strips bare quotes)."""
    return '"' + header.replace("\\", "\\\\").replace('"', '\\"') + '"'


@contextmanager
def conditions(
    path: str, expected: Pin | None = None, registry: PinRegistry | None = None
) -> Iterator[Pin | None]:
    """Make GDAL's requests in this block conditional on the pinned version (thread-local).

    ``If-Match`` with the pinned ETag, else ``If-Unmodified-Since``; nothing for a
    local file. Headers the user set in ``GDAL_HTTP_HEADERS`` are kept.

    Example:
        >>> from taco_gdal.io.sample import fetch_sample
        >>> with conditions("/vsicurl/" + url) as pin:  # url: a Range server on 127.0.0.1
        ...     fetch_sample("/vsicurl/" + url, 157)  # sent with If-Match: <the pinned ETag>
        >>> pin.etag is not None
        True
    """
    container = container_of(path)
    pin = expected if expected is not None else (registry or pins).get(container)
    header = None
    if pin is not None and is_remote(container):
        if pin.etag is not None:
            header = f"If-Match: {pin.etag}"
        elif pin.last_modified is not None:
            header = f"If-Unmodified-Since: {pin.last_modified}"
    if header is None:
        yield pin
        return
    user = gdal.GetConfigOption("GDAL_HTTP_HEADERS")
    value = _quoted(header) if not user else f"{user},{_quoted(header)}"
    from taco_gdal.env import Env

    with Env(GDAL_HTTP_HEADERS=value):
        yield pin


def raise_if_changed(path: str, expected: Pin | None = None, registry: PinRegistry = pins) -> None:
    """After a failed read: raise TacoChangedError if the file changed, else return."""
    container = container_of(path)
    pin = expected if expected is not None else registry.get(container)
    if pin is None or not is_remote(container):
        return
    gdal.VSICurlPartialClearCache(container)
    try:
        current = fetch_pin(container)
    except TacoIOError:
        return
    changes = _what_changed(pin, current)
    if changes:
        raise _changed(pin, current, changes) from None


def verify(path: str, expected: Pin | None = None, registry: PinRegistry = pins) -> Pin | None:
    """Check that the remote container of ``path`` is the one that was pinned.

    The first call records the pin (size only, without a request, when GDAL's cache
    knows the size); later calls compare with it or with ``expected``. Local files
    are not pinned (``None`` is returned).

    Raises:
        TacoChangedError: the size, the ETag or the Last-Modified differs from the pin.
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
            raise _changed(pin, Pin(container, size, None))
        return pin
    current = fetch_pin(container)
    changes = _what_changed(pin, current)
    if changes:
        raise _changed(pin, current, changes)
    return pin
