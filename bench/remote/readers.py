"""The three ways of reading a remote sample that the benchmark compares.

Each reader is built in a worker process from a picklable :class:`Spec`;
``open()`` loads whatever metadata it needs and turns it into one GDAL path per
sample (``TacoDataFrame.read(i)`` of each library, once), ``read(i)`` returns
all pixels of sample ``i``: what is compared is how a sample is read, not the
per-row cost of each library's data frame.

* ``taco_gdal``: ``taco_gdal.read.load(url)`` over plain HTTP, samples through
  ``taco_gdal.io.sample.open_sample`` (the read profile).
* ``tacoreader+rasterio``: the reference reader.  tacoreader (obstore) refuses
  ``http://``, so its metadata is loaded over HTTPS from the *same* server (a
  second, TLS listener with a throw-away CA in ``SSL_CERT_FILE``); the
  ``internal:gdal_vsi`` paths it returns are pointed at the plain-HTTP listener
  and opened with ``rasterio.open`` and GDAL's default options, so every path
  reads samples over the same protocol.
* ``gdal /vsizip/``: ``rasterio.open('/vsizip/{/vsicurl/URL}/DATA/<id>')`` with
  GDAL's default options and no metadata at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import rasterio


@dataclass(frozen=True)
class Spec:
    http_url: str
    https_url: str
    http_base: str
    https_base: str
    ids: tuple[str, ...]


class Reader(Protocol):
    def open(self) -> None: ...

    def read(self, index: int) -> np.ndarray: ...


class TacoGdal:
    name = "taco_gdal"

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.paths: list[str] = []

    def open(self) -> None:
        from taco_gdal.read import load

        frame = load(self.spec.http_url).data
        self.paths = [str(frame.read(i)) for i in range(len(frame))]

    def read(self, index: int) -> np.ndarray:
        from taco_gdal.io.sample import open_sample

        with open_sample(self.paths[index]) as src:
            return src.read()


class Reference:
    name = "tacoreader+rasterio"

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.paths: list[str] = []

    def open(self) -> None:
        import tacoreader

        frame = tacoreader.load(self.spec.https_url).data
        self.paths = [
            str(frame.read(i)).replace(self.spec.https_base, self.spec.http_base)
            for i in range(len(self.spec.ids))
        ]

    def read(self, index: int) -> np.ndarray:
        with rasterio.open(self.paths[index]) as src:
            return src.read()


class VsiZip:
    name = "gdal /vsizip/"

    def __init__(self, spec: Spec) -> None:
        self.spec = spec

    def open(self) -> None:
        return None

    def read(self, index: int) -> np.ndarray:
        path = f"/vsizip/{{/vsicurl/{self.spec.http_url}}}/DATA/{self.spec.ids[index]}"
        with rasterio.open(path) as src:
            return src.read()


READERS: dict[str, type[TacoGdal] | type[Reference] | type[VsiZip]] = {
    cls.name: cls for cls in (TacoGdal, Reference, VsiZip)
}
