"""Scaling sample extension: how packed values map to physical ones (``x * factor + offset``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from taco_gdal.errors import TacoValidationError
from taco_gdal.extensions.base import SampleExtension

if TYPE_CHECKING:
    from taco_gdal.model.sample import Sample

__all__ = ["Scaling"]

Number = float | int


def _as_floats(value: Number | Sequence[Number] | None, name: str) -> float | list[float] | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise TacoValidationError(f"Scaling.{name}: expected a number or list, found {value!r}")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [float(v) for v in value]
    raise TacoValidationError(f"Scaling.{name}: expected a number or list, found {value!r}")


@dataclass(frozen=True)
class Scaling(SampleExtension):
    """``scaling:scale_factor``, ``scaling:scale_offset`` (float32, or list<float32> per band
    when either is a list) and ``scaling:padding`` (list<int32>: top, right, bottom, left).

    Example:
        >>> Scaling(0.0001, 0.0).get_schema()["scaling:scale_factor"]
        DataType(float)
    """

    scale_factor: Number | Sequence[Number] | None = None
    scale_offset: Number | Sequence[Number] | None = None
    padding: Sequence[int] | None = None
    schema_only: bool = False

    def __post_init__(self) -> None:
        factor = _as_floats(self.scale_factor, "scale_factor")
        offset = _as_floats(self.scale_offset, "scale_offset")
        factors = factor if isinstance(factor, list) else [factor]
        if any(f == 0.0 for f in factors):
            raise TacoValidationError(f"Scaling.scale_factor: must not be zero, found {factor!r}")
        padding = None if self.padding is None else [int(v) for v in self.padding]
        if padding is not None and len(padding) != 4:
            raise TacoValidationError(
                f"Scaling.padding: expected 4 integers [top, right, bottom, left], found {padding}"
            )
        if isinstance(factor, list) or isinstance(offset, list):
            factor = factor if isinstance(factor, list) or factor is None else [factor]
            offset = offset if isinstance(offset, list) or offset is None else [offset]
        object.__setattr__(self, "scale_factor", factor)
        object.__setattr__(self, "scale_offset", offset)
        object.__setattr__(self, "padding", padding)

    def get_schema(self) -> dict[str, pa.DataType]:
        per_band = isinstance(self.scale_factor, list) or isinstance(self.scale_offset, list)
        number = pa.list_(pa.float32()) if per_band else pa.float32()
        return {
            "scaling:scale_factor": number,
            "scaling:scale_offset": number,
            "scaling:padding": pa.list_(pa.int32()),
        }

    def get_field_descriptions(self) -> dict[str, str]:
        return {
            "scaling:scale_factor": "Multiplicative factor: physical = packed * factor + offset.",
            "scaling:scale_offset": "Additive offset: physical = packed * factor + offset.",
            "scaling:padding": "Padding in pixels [top, right, bottom, left].",
        }

    def _compute(self, sample: Sample) -> pa.Table:
        values = {
            "scaling:scale_factor": [self.scale_factor],
            "scaling:scale_offset": [self.scale_offset],
            "scaling:padding": [self.padding],
        }
        return pa.table(values, schema=self.arrow_schema())
