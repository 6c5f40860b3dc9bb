"""The two training-input loops the benchmark compares, as map-style datasets.

* ``taco_gdal``: :class:`taco_gdal.torch.SampleDataset` over
  ``taco_gdal.load(http_url)`` with its defaults (rows resolved in the parent,
  one GET per sample, a batch's samples read by up to 4 threads of the worker).
* ``taco_gdal rasterio reader`` (not run by default): the same, with the
  reader SampleDataset used before it read pixels with GDAL alone
  (``open_sample`` and rasterio's ``read()``), to show that change in one run.
* ``taco_gdal read_threads=1`` (not run by default): the same, each batch's
  samples read one after the other by the worker (the default before
  read threads were), so a worker has one request in flight.
* ``tacoreader+rasterio``: what a user writes on the reference reader today:
  ``tacoreader.load(https_url).data``, one ``internal:gdal_vsi`` path per row
  (``TacoDataFrame.read(i)``, once, in the parent), and a dataset whose
  ``__getitem__`` is ``rasterio.open(path).read()`` with GDAL's default
  options.  tacoreader refuses plain ``http://``, so it loads its metadata over
  HTTPS from a TLS listener of the same server; its paths are pointed at the
  plain-HTTP listener so both loops read samples over the same protocol.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import rasterio
import torch
from torch.utils.data import Dataset


class ReferenceDataset(Dataset[dict[str, Any]]):
    """``rasterio.open(path).read()`` per item, GDAL defaults (the reference loop)."""

    def __init__(self, paths: list[str], labels: list[int]) -> None:
        self.paths = paths
        self.labels = labels

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, index: int) -> dict[str, Any]:
        with rasterio.open(self.paths[index]) as src:
            image = torch.from_numpy(src.read())
        return {"image": image, "label": self.labels[index]}


@dataclass(frozen=True)
class Urls:
    http: str
    https: str
    http_base: str
    https_base: str


def taco_gdal_dataset(urls: Urls, read_threads: int | None = None) -> Dataset[Any]:
    import taco_gdal
    from taco_gdal.torch import SampleDataset

    ds = taco_gdal.load(urls.http)
    samples = SampleDataset(ds, columns=["label"], read_threads=read_threads)
    ds.close()
    return samples


def read_with_rasterio(path: str, row: dict[str, Any]) -> Any:
    """``open_sample`` + rasterio ``read()``: SampleDataset's default reader before 259578c."""
    from taco_gdal.io.sample import open_sample

    with open_sample(path) as src:
        return src.read()


def taco_gdal_rasterio_dataset(urls: Urls) -> Dataset[Any]:
    """SampleDataset with the rasterio reader it used before reading with GDAL alone."""
    import taco_gdal
    from taco_gdal.torch import SampleDataset

    ds = taco_gdal.load(urls.http)
    samples = SampleDataset(ds, columns=["label"], read=read_with_rasterio)
    ds.close()
    return samples


def taco_gdal_sequential_dataset(urls: Urls) -> Dataset[Any]:
    """SampleDataset reading a batch's samples one after the other (``read_threads=1``)."""
    return taco_gdal_dataset(urls, read_threads=1)


def reference_dataset(urls: Urls) -> Dataset[Any]:
    import tacoreader

    frame = tacoreader.load(urls.https).data
    paths = [str(frame.read(i)).replace(urls.https_base, urls.http_base) for i in range(len(frame))]
    return ReferenceDataset(paths, [int(v) for v in frame["label"]])


LOOPS = {
    "taco_gdal": taco_gdal_dataset,
    "tacoreader+rasterio": reference_dataset,
    "taco_gdal read_threads=1": taco_gdal_sequential_dataset,
    "taco_gdal rasterio reader": taco_gdal_rasterio_dataset,
}
DEFAULT_LOOPS = ("taco_gdal", "tacoreader+rasterio")
