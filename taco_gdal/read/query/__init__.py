"""Querying: QueryState, the SQL it becomes, DuckDB sessions, filters, time ranges, stats."""

from __future__ import annotations

from taco_gdal._moved import moved_names

# ``taco_gdal.read.query`` was the SQL builder's module, now :mod:`taco_gdal.read.query.sql`.
__getattr__ = moved_names(
    __name__,
    "taco_gdal.read.query.sql",
    [
        "HIDDEN_PREFIX",
        "bound_query_sql",
        "filtered_view_sql",
        "gdal_vsi_arrow",
        "gdal_vsi_sql",
        "is_hidden",
        "level_view_sql",
        "not_padding_mask",
        "not_padding_sql",
        "quote_ident",
        "single_query",
        "sql_string",
        "survivors_view_sql",
    ],
)
