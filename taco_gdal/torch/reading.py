"""Read one FILE sample in a worker: GDAL under the read profile, or a user reader.

One request per remote sample: the default read goes straight to NumPy without a
rasterio dataset (whose open costs more CPU than the read, and workers are
CPU-bound); with ``verify=True`` the bytes are fetched once, checked, and opened
from ``/vsimem/``.  The parent's container pins travel with the reader.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from osgeo import gdal

from taco_gdal.env import config_options
from taco_gdal.errors import TacoIOError
from taco_gdal.format.names import CHECKSUM, GDAL_VSI, ID, SIZE
from taco_gdal.io import pinning
from taco_gdal.io.sample import read_bands, read_sample, sample_size
from taco_gdal.io.vsi import VSIFile
from taco_gdal.torch._digest import check_digest

__all__ = ["Reader", "SampleReader", "read_raster_bytes"]

Reader = Callable[[str, dict[str, Any]], Any]
"""A user reader: ``(gdal_path, row) -> value``; ``row`` holds every column, plain values."""

_MEMORY_ROOT = "/vsimem/taco_gdal_torch"


def read_raster_bytes(data: bytes, where: str) -> np.ndarray:
    """All bands of a raster held in memory, bands first (TacoIOError naming ``where``).

    Example:
        >>> from pathlib import Path
        >>> tif_bytes = Path("src/s000.tif").read_bytes()
        >>> read_raster_bytes(tif_bytes, "sample s0").shape
        (1, 16, 16)
    """
    memory = f"{_MEMORY_ROOT}/{uuid.uuid4().hex}/sample"
    gdal.FileFromMemBuffer(memory, data)
    try:
        return read_bands(memory)
    except TacoIOError as exc:
        raise TacoIOError(f"cannot open {where} as a raster: {exc}") from exc
    finally:
        gdal.Unlink(memory)


def _fetch(path: str, size: int) -> bytes:
    with VSIFile(path) as f:
        return f.read_exact(0, size, "sample")


@dataclass
class SampleReader:
    """Reads FILE rows in whichever process holds it (picklable, no GDAL state).

    Args:
        reader: a user reader, or ``None`` for GDAL (a bands-first array).
        verify: check ``taco_gdal:checksum`` when the row has a value.
        gdal_options: GDAL options set thread-locally around every read.
        pins: container path -> pin recorded in the parent.
    """

    reader: Reader | None = None
    verify: bool = False
    gdal_options: Mapping[str, str] = field(default_factory=dict)
    pins: Mapping[str, pinning.Pin] = field(default_factory=dict)

    def prepare_process(self) -> None:
        """Give this process the parent's pins (once per process, before its first read)."""
        for pin in self.pins.values():
            pinning.pins.record(pin)

    def read(self, row: dict[str, Any]) -> Any:
        """The value of one FILE row: the user reader's, or a bands-first array.

        Raises:
            TacoChecksumError: ``verify`` is on and the bytes do not match.
            TacoChangedError: the container changed since the parent loaded it.
            TacoIOError: the sample cannot be read.
        """
        path = str(row[GDAL_VSI])
        size = row.get(SIZE)
        size = int(size) if size is not None else sample_size(path)
        stored = row.get(CHECKSUM) if self.verify else None
        with config_options(self.gdal_options) if self.gdal_options else nullcontext():
            if stored is None:
                if self.reader is not None:
                    return self.reader(path, row)
                container = pinning.container_of(path)
                return read_sample(path, size, self.pins.get(container))
            return self._read_verified(path, size, str(stored), row)

    def _read_verified(self, path: str, size: int | None, stored: str, row: dict[str, Any]) -> Any:
        if size is None:
            raise TacoIOError(
                f"sample {row.get(ID)!r} ({path}): verifying its {CHECKSUM} needs its size, "
                f"expected a /vsisubfile/ path or an {SIZE!r} value, found neither"
            )
        data = _fetch(path, size)
        check_digest(data, stored, str(row.get(ID)), path)
        if self.reader is None:
            return read_raster_bytes(data, f"sample {row.get(ID)!r} ({path})")
        name = str(row.get(ID)).replace("/", "_")
        memory = f"{_MEMORY_ROOT}/{uuid.uuid4().hex}/{name}"
        gdal.FileFromMemBuffer(memory, data)
        try:
            return self.reader(memory, row)
        finally:
            gdal.Unlink(memory)
