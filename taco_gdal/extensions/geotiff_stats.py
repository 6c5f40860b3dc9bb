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
from taco_gdal.format.names import STATS_SKETCH

if TYPE_CHECKING:
    from taco_gdal.model.sample import Sample

__all__ = ["SKETCH_K", "SKETCH_TYPE", "STAT_NAMES", "GeotiffStats"]

STAT_NAMES: Final = ("min", "max", "mean", "std", "valid%", "p25", "p50", "p75", "p95")
"""Order of the nine continuous statistics of every band."""
_PERCENTILES: Final = (25, 50, 75, 95)
SKETCH_K: Final = 300
"""KLL parameter ``k``: a normalized rank error under 1% for any single quantile.

``datasketches.kll_floats_sketch.get_normalized_rank_error(300, False)`` (99% confidence),
for one sample's sketch and for any merge of such sketches alike.
"""
SKETCH_TYPE: Final = pa.list_(
    pa.struct(
        [
            ("count", pa.int64()),
            ("mean", pa.float64()),
            ("m2", pa.float64()),
            ("kll", pa.binary()),
        ]
    )
)
"""Arrow type of :data:`~taco_gdal.format.names.STATS_SKETCH`: one struct per band."""

Matrix = list[list[float] | None]
Sketches = list[dict[str, Any] | None]


def _describe(
    band: np.ma.MaskedArray[Any, Any], sketched: bool
) -> tuple[list[float] | None, dict[str, Any] | None]:
    """The nine statistics of the valid pixels and, when ``sketched``, their sketch struct.

    The struct holds exact moments (count, mean, sum of squared deviations ``m2``) and a
    KLL sketch; one update call feeds it the whole band.
    """
    valid = band.compressed().astype(np.float64)
    if valid.size == 0:
        return None, None
    mean, std = valid.mean(), valid.std()
    quantiles = np.percentile(valid, _PERCENTILES)
    percent = 100.0 * valid.size / band.size
    stats = [float(v) for v in (valid.min(), valid.max(), mean, std, percent, *quantiles)]
    if not sketched:
        return stats, None
    from datasketches import kll_floats_sketch

    sketch = kll_floats_sketch(SKETCH_K)
    sketch.update(valid.astype(np.float32))
    m2 = float(std) ** 2 * valid.size
    return stats, {"count": valid.size, "mean": float(mean), "m2": m2, "kll": sketch.serialize()}


def _continuous(band: np.ma.MaskedArray[Any, Any]) -> list[float] | None:
    return _describe(band, sketched=False)[0]


def _categorical(band: np.ma.MaskedArray[Any, Any], classes: Sequence[int]) -> list[float] | None:
    valid = band.compressed()
    if valid.size == 0:
        return None
    return [float(np.count_nonzero(valid == value)) / valid.size for value in classes]


def _band_value(value: Any, band: int) -> float | None:
    if value is None:
        return None
    if isinstance(value, list):
        return float(value[band]) if band < len(value) else None
    return float(value)


@dataclass(frozen=True)
class GeotiffStats(SampleExtension):
    """``geotiff:stats`` (list<list<float32>>): one list per band, and its sketches.

    Continuous (default): ``[min, max, mean, std, valid%, p25, p50, p75, p95]`` over
    valid pixels (nodata masked), in physical values when the sample has ``scaling:*``.
    Categorical: the fraction of valid pixels equal to each of ``class_values``.
    A band without valid pixels gives null and a :class:`~taco_gdal.TacoWarning`.

    Continuous statistics also write ``taco_gdal:stats_sketch`` (unless ``sketch=False``),
    an extension column that reference readers ignore: per band a struct of the valid
    pixel ``count``, their ``mean`` and ``m2`` (sum of squared deviations from the mean,
    float64, so pooled means and standard deviations are exact) and ``kll``, a serialized
    Apache DataSketches ``kll_floats_sketch`` with ``k`` = :data:`SKETCH_K` (normalized
    rank error under 1%; float32 values, like ``geotiff:stats``), null for a band
    without valid pixels.  Sketches of many
    samples merge into one, so ``TacoDataset.stats`` gives true percentiles of any view.

    Example:
        >>> GeotiffStats(categorical=True, class_values=[0, 1]).get_schema()
        {'geotiff:stats': ListType(list<item: list<item: float>>)}
    """

    categorical: bool = False
    class_values: Sequence[int] | None = None
    schema_only: bool = False
    sketch: bool = True

    def __post_init__(self) -> None:
        if self.categorical and not self.class_values:
            raise TacoValidationError(
                "GeotiffStats: categorical=True needs class_values, e.g. [0, 1, 2]"
            )
        if self.class_values is not None:
            object.__setattr__(self, "class_values", tuple(int(v) for v in self.class_values))

    @property
    def _sketched(self) -> bool:
        return self.sketch and not self.categorical

    def get_schema(self) -> dict[str, pa.DataType]:
        schema: dict[str, pa.DataType] = {"geotiff:stats": pa.list_(pa.list_(pa.float32()))}
        if self._sketched:
            schema[STATS_SKETCH] = SKETCH_TYPE
        return schema

    def get_field_descriptions(self) -> dict[str, str]:
        what = "class fractions" if self.categorical else ", ".join(STAT_NAMES)
        described = {"geotiff:stats": f"Per-band statistics: {what}."}
        if self._sketched:
            described[STATS_SKETCH] = (
                "Per-band valid pixel count, mean, m2 and KLL quantile sketch "
                f"(kll_floats_sketch, k={SKETCH_K}; taco_gdal extension)."
            )
        return described

    def _compute(self, sample: Sample) -> pa.Table:
        path = sample.file_path
        if path is None:
            raise TacoValidationError(
                f"GeotiffStats: sample {sample.id!r} is not a file (type {sample.type})"
            )
        factor, offset = sample.get("scaling:scale_factor"), sample.get("scaling:scale_offset")
        scaling = (
            None if self.categorical or (factor is None and offset is None) else (factor, offset)
        )
        stats, sketches = self._read(path, scaling)
        columns: dict[str, list[Any]] = {"geotiff:stats": [stats]}
        if self._sketched:
            columns[STATS_SKETCH] = [sketches]
        return pa.table(columns, schema=self.arrow_schema())

    def _read(self, path: str, scaling: tuple[Any, Any] | None) -> tuple[Matrix, Sketches]:
        from rasterio.errors import RasterioIOError

        from taco_gdal.io.sample import open_raster

        try:
            with open_raster(path) as src:
                bands = [src.read(i, masked=True) for i in range(1, src.count + 1)]
        except (RasterioIOError, TacoIOError) as exc:
            raise TacoIOError(f"GeotiffStats: cannot read {path!r}: {exc}") from exc
        result: Matrix = []
        sketches: Sketches = []
        for index, band in enumerate(bands, start=1):
            if scaling is not None:
                factor = _band_value(scaling[0], index - 1) or 1.0
                band = band.astype(np.float64) * factor + (
                    _band_value(scaling[1], index - 1) or 0.0
                )
            if self.categorical:
                assert self.class_values is not None
                values = _categorical(band, self.class_values)
            else:
                values, sketch = _describe(band, self._sketched)
                sketches.append(sketch)
            if values is None:
                warnings.warn(
                    f"GeotiffStats: band {index} of {path!r} has no valid pixels; its "
                    "statistics are null",
                    TacoWarning,
                    stacklevel=4,
                )
            result.append(values)
        return result, sketches
