"""Names and limits the TACO specification defines, stated once.

Every other module imports these; no literal such as ``"internal:offset"`` or
``"COLLECTION.json"`` is restated elsewhere in the package.
"""

from __future__ import annotations

from typing import Final

# --- limits -----------------------------------------------------------------
MAX_DEPTH: Final = 5
"""Deepest level index allowed: levels 0..5, six in all (spec 5.5, header capacity)."""
MAX_LEVELS: Final = MAX_DEPTH + 1

# --- sample types -----------------------------------------------------------
FILE: Final = "FILE"
FOLDER: Final = "FOLDER"
SAMPLE_TYPES: Final = (FILE, FOLDER)

PADDING_PREFIX: Final = "__TACOPAD__"
"""Ids of padding samples: ``__TACOPAD__0``, ``__TACOPAD__1``, ..."""

# --- container members / files ----------------------------------------------
HEADER_MEMBER: Final = "TACO_HEADER"
DATA_DIR: Final = "DATA"
METADATA_DIR: Final = "METADATA"
COLLECTION_FILE: Final = "COLLECTION.json"
LOCAL_META: Final = "__meta__"
TACOCAT_FILE: Final = "__TACOCAT__"
TACOCAT_DIR: Final = ".tacocat"
TACOLLECTION_FILE: Final = "TACOLLECTION.json"
ZIP_SUFFIXES: Final = (".tacozip", ".zip")
RESERVED_OUTPUT_NAMES: Final = frozenset({DATA_DIR, METADATA_DIR, TACOCAT_DIR})


def level_file(level: int) -> str:
    """File name of a consolidated level table: ``level0.parquet`` ..."""
    return f"level{level}.parquet"


def level_member(level: int) -> str:
    """Archive member name of a consolidated level table: ``METADATA/level0.parquet``."""
    return f"{METADATA_DIR}/{level_file(level)}"


# --- columns ----------------------------------------------------------------
ID: Final = "id"
TYPE: Final = "type"
PATH: Final = "path"
"""Source location of a sample while writing; never stored in a container."""

CURRENT_ID: Final = "internal:current_id"
PARENT_ID: Final = "internal:parent_id"
OFFSET: Final = "internal:offset"
SIZE: Final = "internal:size"
RELATIVE_PATH: Final = "internal:relative_path"
SOURCE_FILE: Final = "internal:source_file"
GDAL_VSI: Final = "internal:gdal_vsi"

INTERNAL_PREFIX: Final = "internal:"
INTERNAL_COLUMN_ORDER: Final = (CURRENT_ID, PARENT_ID, OFFSET, SIZE, RELATIVE_PATH)
"""Order of internal columns after the user columns (reference writer's order)."""
PROTECTED_COLUMNS: Final = frozenset(
    {ID, TYPE, CURRENT_ID, PARENT_ID, OFFSET, SIZE, RELATIVE_PATH, SOURCE_FILE, GDAL_VSI}
)

INTERNAL_FIELD_DESCRIPTIONS: Final = {
    CURRENT_ID: "Row position of the sample within its level (0-based).",
    PARENT_ID: "Row position (internal:current_id) of the parent sample in the previous level.",
    OFFSET: "Byte offset of the sample data inside the container file.",
    SIZE: "Size in bytes of the sample data inside the container file.",
    RELATIVE_PATH: "Path of the sample under DATA/: '{parent path}/{id}', folders end with '/'.",
    SOURCE_FILE: "File name of the source ZIP a TACOCAT row came from.",
    GDAL_VSI: "GDAL virtual file system path of the sample data.",
}
CORE_FIELD_DESCRIPTIONS: Final = {
    ID: "Unique sample identifier within its parent.",
    TYPE: "Sample type: FILE or FOLDER.",
}

# --- collection keys ----------------------------------------------------------
PIT_SCHEMA_KEY: Final = "taco:pit_schema"
FIELD_SCHEMA_KEY: Final = "taco:field_schema"
SOURCES_KEY: Final = "taco:sources"
SUBSET_OF_KEY: Final = "taco:subset_of"
SUBSET_DATE_KEY: Final = "taco:subset_date"
TACO_VERSION: Final = "2.0.0"

# --- spatio-temporal columns the reader's filters look for (spec 7.2.2) ---------
ISTAC_GEOMETRY: Final = "istac:geometry"
ISTAC_CRS: Final = "istac:crs"
STAC_CENTROID: Final = "stac:centroid"
ISTAC_CENTROID: Final = "istac:centroid"
ISTAC_TIME_START: Final = "istac:time_start"
STAC_TIME_START: Final = "stac:time_start"
GEOMETRY_COLUMNS: Final = (ISTAC_GEOMETRY, STAC_CENTROID, ISTAC_CENTROID)
"""WKB columns, in the order ``geometry_col="auto"`` tries them."""
CHECKSUM: Final = "taco_gdal:checksum"
"""Per-sample digest column (a taco_gdal extension): ``"<algorithm>:<lowercase hex>"``.

Written for FILE rows when ``create(..., checksum=...)`` asks for it, null for
FOLDER and padding rows; readers that do not know it ignore it.
"""
CHECKSUM_ALGORITHMS: Final = ("crc32c", "xxh3", "sha256")
CHECKSUM_DESCRIPTION: Final = (
    "Digest of the sample's bytes, '<algorithm>:<lowercase hex>' (taco_gdal extension); "
    "null for FOLDER and padding rows."
)
"""``taco:field_schema`` description of :data:`CHECKSUM`."""
STATS_SKETCH: Final = "taco_gdal:stats_sketch"
"""Per-band moments and KLL quantile sketch of a sample (a taco_gdal extension column).

Written by ``GeotiffStats`` next to ``geotiff:stats``; readers that do not know it ignore it.
"""
DATA_TYPE: Final = "taco_gdal:data_type"
"""NumPy dtype name of band 1 of a sample (``"uint16"``), a taco_gdal extension column.

Written by ``samples_from_rasters`` (the ``PixelType`` extension), so ``to_xarray()`` knows
the cube's type without opening a sample; readers that do not know it ignore it.
"""
NODATA: Final = "taco_gdal:nodata"
"""Nodata value of band 1 of a sample (float64, null when none), beside :data:`DATA_TYPE`."""

STAC3_DATETIME: Final = "stac:datetime"
"""TACO 3 (taco-eo) STAC acquisition time; null when only a start/end range is known."""
STAC3_START_DATETIME: Final = "stac:start_datetime"
"""TACO 3 (taco-eo) STAC range start."""

TIME_START_COLUMNS: Final = (
    ISTAC_TIME_START,
    STAC_TIME_START,
    STAC3_DATETIME,
    STAC3_START_DATETIME,
)
"""Timestamp columns, in the order ``time_col="auto"`` tries them (TACO 2 first, then TACO 3)."""

# --- raster grid columns of the STAC extension (spec 7.2.1), read by taco_gdal.index ---------
STAC_CRS: Final = "stac:crs"
STAC_GEOTRANSFORM: Final = "stac:geotransform"
STAC_TENSOR_SHAPE: Final = "stac:tensor_shape"
TACO_VERSION_KEY: Final = "taco_version"
"""COLLECTION key holding the TACO specification version (``TACO_VERSION``)."""
