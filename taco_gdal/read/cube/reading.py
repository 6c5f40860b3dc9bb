"""Read a block of samples for a dask task: the read profile, one GET per remote sample.

A :class:`SampleBlock` holds only its own samples' paths and sizes, the caller's
GDAL options and the containers' pins, so a task pickles small and reads the same
way in a thread, a forked worker or a ``dask.distributed`` worker.  It is indexed
like a NumPy array, and only the samples an index selects are read, so dask's
fused slices (``cube[3]``, ``cube[3:5, 0]``) read just those samples.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from taco_gdal.env import config_options
from taco_gdal.errors import TacoIOError
from taco_gdal.io import pinning
from taco_gdal.io.sample import read_sample

__all__ = ["MAX_READ_THREADS", "READ_BYTES_IN_FLIGHT", "SampleBlock", "read_threads"]

MAX_READ_THREADS = 4
"""Threads one task reads its samples with, at most (as ``SampleDataset`` does)."""
READ_BYTES_IN_FLIGHT = 8 * 1024 * 1024
"""Bytes one task fetches at once, at most: GDAL's ``/vsicurl/`` cache must hold a
sample between its GET and its decode, or the sample costs a second GET."""


def read_threads(sample_bytes: int) -> int:
    """Threads per task for samples of ``sample_bytes`` (1 to :data:`MAX_READ_THREADS`).

    Example:
        >>> read_threads(16_000), read_threads(6_000_000)
        (4, 1)
    """
    if sample_bytes <= 0:
        return MAX_READ_THREADS
    return max(1, min(MAX_READ_THREADS, READ_BYTES_IN_FLIGHT // sample_bytes))


@dataclass(frozen=True)
class SampleBlock:
    """The samples of one dask block, read on demand (bands first, then rows, cols).

    Args:
        paths: GDAL paths of the block's samples.
        sizes: their sizes in bytes (``-1``: unknown).
        shape: ``(samples, bands, rows, cols)`` of the block, after ``bands``.
        dtype: the block's NumPy type (the samples are cast to it).
        bands: 0-based positions of the bands to keep (``None``: all).
        options: GDAL options applied around every read (the caller's ``Env``).
        pins: container path -> pin recorded when the dataset was loaded.
        threads: threads that read the selected samples at the same time.
        where: the dataset's path, for messages.
    """

    paths: tuple[str, ...]
    sizes: tuple[int, ...]
    shape: tuple[int, int, int, int]
    dtype: np.dtype[Any]
    bands: tuple[int, ...] | None
    options: Mapping[str, str | None]
    pins: Mapping[str, pinning.Pin]
    threads: int
    where: str

    @property
    def ndim(self) -> int:
        return 4

    def __getitem__(self, key: Any) -> np.ndarray:
        """The samples ``key`` selects (one read each), then the rest of ``key``."""
        key = key if isinstance(key, tuple) else (key,)
        first, rest = (key[0], key[1:]) if key else (slice(None), ())
        positions = np.arange(len(self.paths))[first]
        picked = np.atleast_1d(positions)
        stack = np.empty((len(picked), *self.shape[1:]), dtype=self.dtype)
        for k, value in zip(range(len(picked)), self._read_all(picked), strict=True):
            stack[k] = value
        block = stack[(slice(None), *rest)]
        return block[0] if np.ndim(positions) == 0 else block

    def _read_all(self, positions: np.ndarray) -> list[np.ndarray]:
        if self.threads <= 1 or len(positions) <= 1:
            return [self._read(int(p)) for p in positions]
        first = self._read(int(positions[0]))  # the container's size is known before the rest
        with ThreadPoolExecutor(min(self.threads, len(positions) - 1), "taco_gdal_cube") as pool:
            return [first, *pool.map(lambda p: self._read(int(p)), positions[1:])]

    def _read(self, position: int) -> np.ndarray:
        path = self.paths[position]
        size = self.sizes[position]
        with config_options(self.options):
            pin = self.pins.get(pinning.container_of(path))
            if pin is not None and pinning.pins.get(pin.path) is None:
                pinning.pins.record(pin)  # a fresh worker process: the loader's pin
            pixels = read_sample(path, size if size >= 0 else None, pin)
        if self.bands is not None:
            pixels = pixels[list(self.bands)]
        if pixels.shape != self.shape[1:]:
            raise TacoIOError(
                f"{self.where}: sample {path!r} expected (bands, rows, cols) = "
                f"{self.shape[1:]} as its metadata states, found {pixels.shape}"
            )
        return pixels.astype(self.dtype, copy=False)


def block_bounds(count: int, per_block: int) -> Sequence[tuple[int, int]]:
    """``(start, stop)`` of each block of ``per_block`` samples.

    Example:
        >>> block_bounds(5, 2)
        [(0, 2), (2, 4), (4, 5)]
    """
    return [(s, min(s + per_block, count)) for s in range(0, count, per_block)]
