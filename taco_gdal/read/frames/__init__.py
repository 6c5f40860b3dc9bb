"""Frames: TacoDataFrame, its lazy columns, navigation into children, Arrow/Polars conversion."""

from __future__ import annotations

from taco_gdal._moved import moved_names

# ``taco_gdal.read.frames`` was the conversion module, now :mod:`taco_gdal.read.frames.convert`.
__getattr__ = moved_names(
    __name__,
    "taco_gdal.read.frames.convert",
    [
        "PROTECTED_COLUMNS",
        "PitLevel",
        "PitSchema",
        "check_assignment",
        "frame_to_arrow",
        "to_polars",
    ],
)
