"""PixelType sample extension: a raster's pixel type and nodata, as taco_gdal extension columns."""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Real
from typing import TYPE_CHECKING, Final

import numpy as np
import pyarrow as pa

from taco_gdal.errors import TacoValidationError
from taco_gdal.extensions.base import SampleExtension
from taco_gdal.format.names import DATA_TYPE, NODATA

if TYPE_CHECKING:
    from taco_gdal.model.sample import Sample

__all__ = ["PixelType", "numpy_type_name"]

_KINDS: Final = "iufc"
"""NumPy kinds a raster band can have: signed, unsigned, float, complex."""
_RASTERIO_ONLY: Final = {"complex_int16": "complex64"}
"""rasterio's names without a NumPy type, and the type GDAL reads them as."""


def numpy_type_name(value: object, where: str) -> str:
    """The NumPy name of a pixel type (``"uint16"``), from a name, a dtype or rasterio's name.

    Raises:
        TacoValidationError: ``value`` is not an integer, float or complex type.

    Example:
        >>> numpy_type_name("complex_int16", "here"), numpy_type_name(np.float32, "here")
        ('complex64', 'float32')
    """
    named = _RASTERIO_ONLY.get(value, value) if isinstance(value, str) else value
    try:
        kind = None if named is None else np.dtype(named)  # type: ignore[call-overload]
    except TypeError:
        kind = None
    if kind is None or kind.kind not in _KINDS:
        raise TacoValidationError(
            f"{where}: expected a pixel type NumPy knows (an integer, float or complex type "
            f"such as 'uint16'), found {value!r}"
        )
    return str(kind.name)


@dataclass(frozen=True)
class PixelType(SampleExtension):
    """``taco_gdal:data_type`` and ``taco_gdal:nodata`` of a raster's band 1.

    The TACO specification states a sample's shape and grid but not its pixel
    type; with these columns ``TacoDataset.to_xarray()`` builds a cube without
    opening a sample.  They are extension columns: readers that do not know
    them show them as two more metadata columns.

    Args:
        data_type: NumPy's name of the type (``"uint16"``), or rasterio's
            (``src.dtypes[0]``; ``"complex_int16"`` is stored as ``"complex64"``).
        nodata: the nodata value, or None when the band declares none.

    Example:
        >>> import rasterio
        >>> with rasterio.open("scenes/scene0.tif") as src:
        ...     ext = PixelType(src.dtypes[0], src.nodata)
        >>> ext.data_type, ext.nodata
        ('uint8', None)
    """

    data_type: str | None = None
    nodata: float | None = None
    schema_only: bool = False

    def __post_init__(self) -> None:
        if self.schema_only:
            return
        object.__setattr__(self, "data_type", numpy_type_name(self.data_type, "PixelType"))
        if self.nodata is not None:
            if isinstance(self.nodata, bool) or not isinstance(self.nodata, Real):
                raise TacoValidationError(
                    f"PixelType.nodata: expected a number or None, found {self.nodata!r}"
                )
            object.__setattr__(self, "nodata", float(self.nodata))

    def get_schema(self) -> dict[str, pa.DataType]:
        return {DATA_TYPE: pa.string(), NODATA: pa.float64()}

    def get_field_descriptions(self) -> dict[str, str]:
        return {
            DATA_TYPE: "NumPy pixel type of band 1, e.g. 'uint16' (taco_gdal extension).",
            NODATA: "Nodata value of band 1, null when none (taco_gdal extension).",
        }

    def _compute(self, sample: Sample) -> pa.Table:
        return pa.table({DATA_TYPE: [self.data_type], NODATA: [self.nodata]},
                        schema=self.arrow_schema())  # fmt: skip
