"""Open one sample with the read profile: one GET, verified bytes, pinned container.

:func:`open_sample` checks the pin, fetches a small remote sample whole into
GDAL's cache, compares ``checksum=`` when given, and opens it under the profile
(active around the open only). :func:`read_sample` does the same but reads with
GDAL alone, about a third of the CPU for a small sample.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TypeVar, cast

import numpy as np
import rasterio
from osgeo import gdal
from rasterio.errors import RasterioIOError
from rasterio.io import DatasetReader

from taco_gdal.errors import TacoChecksumError, TacoFormatError, TacoIOError
from taco_gdal.format.vsi import SUBFILE_PREFIX, is_remote, parse_subfile, to_vsi
from taco_gdal.io import pinning
from taco_gdal.io.profile import INGEST_LIMIT, sample_env
from taco_gdal.io.vsi import VSIFile, file_size

__all__ = [
    "check_digest",
    "fetch_sample",
    "open_raster",
    "open_sample",
    "read_bands",
    "read_sample",
    "sample_size",
]

T = TypeVar("T")


def sample_size(vsi_path: str) -> int | None:
    """The size a ``/vsisubfile/`` path states, ``None`` for other paths."""
    return parse_subfile(vsi_path).size if vsi_path.startswith(SUBFILE_PREFIX) else None


def fetch_sample(vsi_path: str, size: int) -> None:
    """Bring the first ``size`` bytes of ``vsi_path`` into GDAL's cache, verified.

    Raises:
        TacoIOError: the bytes could not all be read (names the URL).
    """
    with VSIFile(vsi_path) as f:
        f.read_exact(0, size, "sample")


def check_digest(vsi_path: str, checksum: str, size: int | None = None) -> None:
    """Read the sample's bytes (streamed) and compare them with ``checksum``.

    Raises:
        TacoChecksumError: the digests differ (names sample, container, both digests).
        TacoFormatError: ``checksum`` is not ``"<algorithm>:<lowercase hex>"``.
    """
    from taco_gdal.format.checksum import new_hasher, parse_checksum
    from taco_gdal.io.stream import Span, stream_spans

    expected = parse_checksum(checksum, f"checksum of {vsi_path}")
    if size is None:
        size = file_size(vsi_path)
    hasher = new_hasher(expected.algorithm)
    if size:
        stream_spans(vsi_path, [Span(0, size, hasher.update)])
    found = hasher.hexdigest()
    if found != expected.hexdigest:
        raise TacoChecksumError(
            f"sample {vsi_path!r} in container {pinning.container_of(vsi_path)!r} does not "
            f"match its digest: expected {expected}, found {expected.algorithm}:{found} (the "
            "bytes changed after the digest was written, or the metadata points elsewhere)"
        )


def _check_inside_container(vsi_path: str, state: pinning.Pin | None) -> None:
    """A ``/vsisubfile/`` range must end inside its pinned container (raises TacoFormatError)."""
    if state is None or not vsi_path.startswith(SUBFILE_PREFIX):
        return
    sub = parse_subfile(vsi_path)
    if sub.container == state.path and sub.offset + sub.size > state.size:
        raise TacoFormatError(
            f"sample {vsi_path!r}: bytes {sub.offset}..{sub.offset + sub.size} expected inside "
            f"{state.path}, which has {state.size} bytes (the row's internal:offset/size are "
            "wrong)"
        )


def _open_profiled(
    path: str | os.PathLike[str],
    size: int | None,
    pin: pinning.Pin | None,
    checksum: str | None,
    verify: bool,
    opener: Callable[[str], T],
) -> T:
    """``opener(vsi)`` under the read profile, after the pin, fetch and digest checks."""
    vsi = to_vsi(path)
    if size is None:
        size = sample_size(vsi)
    remote = is_remote(vsi)
    if remote:
        state = pinning.verify(vsi, pin)
        if size is None and state is not None and state.path == vsi:  # a loose remote file
            size = state.size
        _check_inside_container(vsi, state)
    # only around the open: the caller's own GDAL calls stay untouched
    failure: TacoIOError | RasterioIOError | None = None
    fetched = size if remote and size is not None and 0 < size <= INGEST_LIMIT else None
    # a fetched sample waits whole in GDAL's cache: ingesting it at open would copy it again
    with sample_env(size if fetched is None else None), pinning.conditions(vsi, pin) as pinned:
        try:
            if fetched is not None:
                fetch_sample(vsi, fetched)
            if checksum is not None and verify:
                check_digest(vsi, checksum, size)
            return opener(vsi)
        except TacoChecksumError:
            raise
        except (TacoIOError, RasterioIOError) as exc:
            failure = exc
    if remote:  # a 412 (precondition failed) or a short body: did the file change?
        pinning.raise_if_changed(vsi, pinned)
    if isinstance(failure, TacoIOError):
        raise failure
    raise TacoIOError(f"cannot open sample {vsi!r}: {failure}") from failure


@contextmanager
def open_sample(
    path: str | os.PathLike[str],
    size: int | None = None,
    pin: pinning.Pin | None = None,
    *,
    checksum: str | None = None,
    verify: bool = True,
) -> Iterator[DatasetReader]:
    """Open a sample with rasterio under the read profile.

    Args:
        path: a sample path (``internal:gdal_vsi``), URL or local file.
        size: the sample's size in bytes; by default taken from a ``/vsisubfile/``
            path, or from the pin of a loose remote file.
        pin: the container state to verify against (default: the process-wide pin).
        checksum: the sample's ``taco_gdal:checksum`` value, when the dataset has one.
        verify: with a ``checksum``, compare the bytes first.

    Raises:
        TacoChangedError: the container changed since it was pinned.
        TacoChecksumError: the bytes do not match ``checksum``.
        TacoIOError: the sample could not be read or opened (names the path).

    Example:
        >>> row = taco_gdal.load("dataset.tacozip").data.iloc[0]
        >>> row["taco_gdal:checksum"]
        'xxh3:...'
        >>> with open_sample(row["internal:gdal_vsi"], checksum=row["taco_gdal:checksum"]) as src:
        ...     src.read().shape
        (1, 16, 16)
    """
    with _open_profiled(path, size, pin, checksum, verify, rasterio.open) as dataset:
        yield dataset


def read_bands(vsi_path: str) -> np.ndarray:
    """Every band of a raster GDAL opens, bands first, as ``rasterio``'s ``read()`` returns.

    No rasterio dataset, so no CRS parsing; the caller sets the GDAL options.

    Raises:
        TacoIOError: GDAL cannot open or read the raster (names the path and GDAL's message).

    Example:
        >>> read_bands("src/s000.tif").shape
        (1, 16, 16)
    """
    gdal.ErrorReset()
    array: np.ndarray | None
    gdal.PushErrorHandler("CPLQuietErrorHandler")
    try:
        dataset = gdal.OpenEx(vsi_path, gdal.OF_RASTER | gdal.OF_READONLY)
        array = None if dataset is None else dataset.ReadAsArray()
    except RuntimeError as exc:  # raised instead of returning None under UseExceptions()
        raise TacoIOError(f"cannot read raster {vsi_path!r}: {exc}") from exc
    finally:
        gdal.PopErrorHandler()
    if array is None:
        what = "open" if dataset is None else "read"
        raise TacoIOError(f"cannot {what} raster {vsi_path!r}: {gdal.GetLastErrorMsg()}")
    bands: np.ndarray = array if array.ndim == 3 else array[np.newaxis]
    return bands


def read_sample(
    path: str | os.PathLike[str],
    size: int | None = None,
    pin: pinning.Pin | None = None,
    *,
    checksum: str | None = None,
    verify: bool = True,
) -> np.ndarray:
    """Every band of a sample, bands first: :func:`open_sample`'s checks, GDAL's read.

    Raises:
        TacoChangedError: the container changed since it was pinned.
        TacoChecksumError: the bytes do not match ``checksum``.
        TacoIOError: the sample could not be read (names the path).

    Example:
        >>> row = taco_gdal.load("dataset.tacozip").data.iloc[0]
        >>> read_sample(row["internal:gdal_vsi"]).shape
        (1, 16, 16)
    """
    return _open_profiled(path, size, pin, checksum, verify, read_bands)


def open_raster(path: str | os.PathLike[str]) -> AbstractContextManager[DatasetReader]:
    """Open a raster that taco_gdal itself reads (e.g. to compute metadata).

    Remote paths go through :func:`open_sample`; local files open plainly, so GDAL
    still finds side-car files (``.aux.xml``, ``.msk``) that ``EMPTY_DIR`` would hide.
    """
    vsi = to_vsi(path)
    if is_remote(vsi):
        return open_sample(vsi)
    try:
        dataset = rasterio.open(vsi)
    except RasterioIOError as exc:
        raise TacoIOError(f"cannot open raster {vsi!r}: {exc}") from exc
    return cast("AbstractContextManager[DatasetReader]", dataset)
