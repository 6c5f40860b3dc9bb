"""Picklable pieces for DataLoader workers (spawn and forkserver import them by name)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from osgeo import gdal


@dataclass(frozen=True)
class Tag:
    """A transform that records which dataset an item came from."""

    name: str

    def __call__(self, item: dict[str, Any]) -> dict[str, Any]:
        item["source"] = self.name
        return item


def as_list(batch: list[Any]) -> list[Any]:
    """A collate_fn that keeps the items as they are."""
    return batch


def read_bytes(path: str, row: dict[str, Any]) -> dict[str, Any]:
    """A user reader for any file: its bytes through GDAL's VSI layer, and its size."""
    handle = gdal.VSIFOpenL(path, "rb")
    assert handle is not None, path
    try:
        data = bytes(gdal.VSIFReadL(1, int(row["internal:size"]), handle))
    finally:
        gdal.VSIFCloseL(handle)
    return {"payload": data, "nbytes": len(data)}
