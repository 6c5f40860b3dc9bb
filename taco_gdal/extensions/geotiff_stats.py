"""GeotiffStats sample extension: per-band statistics of a raster file, read with rasterio."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pyarrow as pa

from taco_gdal.errors import TacoIOError, TacoValidationError, TacoWarning
from taco_gdal.extensions.base import SampleExtension

if TYPE_CHECKING:
    from taco_gdal.model.sample import Sample

__all__ = ["STAT_NAMES", "GeotiffStats"]

STAT_NAMES: Final = ("min", "max", "mean", "std", "valid%", "p25", "p50", "p75", "p95")
"""Order of the nine continuous statistics of every band."""
_PERCENTILES: Final = (25, 50, 75, 95)

Matrix = list[list[float] | None]


def _continuous(band: np.ma.MaskedArray[Any, Any]) -> list[float] | None:
    valid = band.compressed().astype(np.float64)
    if valid.size == 0:
        return None
    percent = 100.0 * valid.size / band.size
    quantiles = np.percentile(valid, _PERCENTILES)
    head = [valid.min(), valid.max(), valid.mean(), valid.std(), percent]
    return [float(v) for v in (*head, *quantiles)]


def _categorical(band: np.ma.MaskedArray[Any, Any], classes: Sequence[int]) -> list[float] | None:
    valid = band.compressed()
    if valid.size == 0:
        return None
    return [float(np.count_nonzero(valid == value)) / valid.size for value in classes]


def _scaled(stats: list[float], factor: float, offset: float) -> list[float]:
    """Apply ``x * factor + offset``: std only scales, valid% is unchanged."""
    low, high, mean, std, percent, *quantiles = stats
    moved = [v * factor + offset for v in (low, high, mean)]
    return [*moved, std * abs(factor), percent, *(q * factor + offset for q in quantiles)]


def _band_value(value: Any, band: int) -> float | None:
    if value is None:
        return None
    if isinstance(value, list):
        return float(value[band]) if band < len(value) else None
    return float(value)


@dataclass(frozen=True)
class GeotiffStats(SampleExtension):
    """``geotiff:stats`` (list<list<float32>>): one list per band.

    Continuous (default): ``[min, max, mean, std, valid%, p25, p50, p75, p95]`` over
    valid pixels, in physical values when the sample has ``scaling:*``.
    Categorical: the fraction of valid pixels equal to each of ``class_values``.
    A band without valid pixels gives null and a :class:`~taco_gdal.TacoWarning`.

    Example:
        >>> GeotiffStats(categorical=True, class_values=[0, 1]).get_schema()
        {'geotiff:stats': ListType(list<item: list<item: float>>)}
    """

    categorical: bool = False
    class_values: Sequence[int] | None = None
    schema_only: bool = False

    def __post_init__(self) -> None:
        if self.categorical and not self.class_values:
            raise TacoValidationError(
                "GeotiffStats: categorical=True needs class_values, e.g. [0, 1, 2]"
            )
        if self.class_values is not None:
            object.__setattr__(self, "class_values", tuple(int(v) for v in self.class_values))

    def get_schema(self) -> dict[str, pa.DataType]:
        return {"geotiff:stats": pa.list_(pa.list_(pa.float32()))}

    def get_field_descriptions(self) -> dict[str, str]:
        what = "class fractions" if self.categorical else ", ".join(STAT_NAMES)
        return {"geotiff:stats": f"Per-band statistics: {what}."}

    def _compute(self, sample: Sample) -> pa.Table:
        path = sample.file_path
        if path is None:
            raise TacoValidationError(
                f"GeotiffStats: sample {sample.id!r} is not a file (type {sample.type})"
            )
        stats = self._read(path)
        if not self.categorical:
            factor, offset = sample.get("scaling:scale_factor"), sample.get("scaling:scale_offset")
            if factor is not None or offset is not None:
                stats = [
                    None
                    if band is None
                    else _scaled(band, _band_value(factor, i) or 1.0, _band_value(offset, i) or 0.0)
                    for i, band in enumerate(stats)
                ]
        return pa.table({"geotiff:stats": [stats]}, schema=self.arrow_schema())

    def _read(self, path: str) -> Matrix:
        from rasterio.errors import RasterioIOError

        from taco_gdal.io.sample import open_raster

        try:
            with open_raster(path) as src:
                bands = [src.read(i, masked=True) for i in range(1, src.count + 1)]
        except (RasterioIOError, TacoIOError) as exc:
            raise TacoIOError(f"GeotiffStats: cannot read {path!r}: {exc}") from exc
        result: Matrix = []
        for index, band in enumerate(bands, start=1):
            if self.categorical:
                assert self.class_values is not None
                values = _categorical(band, self.class_values)
            else:
                values = _continuous(band)
            if values is None:
                warnings.warn(
                    f"GeotiffStats: band {index} of {path!r} has no valid pixels; its "
                    "statistics are null",
                    TacoWarning,
                    stacklevel=4,
                )
            result.append(values)
        return result
