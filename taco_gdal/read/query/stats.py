"""Aggregations of ``geotiff:stats`` over a dataset's current (filtered) view, in DuckDB.

``geotiff:stats`` holds per band ``[min, max, mean, std, valid%, p25, p50, p75, p95]``
or class fractions.  Each statistic is one SQL query: ``min``/``max`` the extremes;
``mean`` and ``std`` (pooled) weighted by each sample's valid pixels (the
``stac:tensor_shape`` area times ``valid%``, else 1), so that a mostly-nodata sample
does not pull them (the reference weights by all pixels); ``p25`` .. ``p95`` the
weighted mean of the samples' (approximate); ``categorical`` pixel-weighted fractions.
Datasets with sketches get exact means and true percentiles from
:mod:`taco_gdal.read.query.sketches`; these float32 aggregates are its fallback.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal

import numpy as np
import pyarrow as pa

from taco_gdal.errors import TacoQueryError
from taco_gdal.format.names import FIELD_SCHEMA_KEY
from taco_gdal.read.query.sql import descendants_sql, quote_ident

if TYPE_CHECKING:
    from taco_gdal.read.query.state import QueryState

__all__ = [
    "CONTINUOUS",
    "PERCENTILES",
    "STATS_COLUMN",
    "WEIGHT_COLUMN",
    "Stat",
    "aggregate_stats",
    "declared_categorical",
    "select_bands",
    "view_stats",
]

STATS_COLUMN: Final = "geotiff:stats"
WEIGHT_COLUMN: Final = "stac:tensor_shape"
Stat = Literal["min", "max", "mean", "std", "p25", "p50", "p75", "p95", "categorical"]
CONTINUOUS: Final = ("min", "max", "mean", "std", "valid%", "p25", "p50", "p75", "p95")
"""Positions of the continuous statistics in each band's list."""
_STATS: Final = ("min", "max", "mean", "std", "p25", "p50", "p75", "p95", "categorical")
PERCENTILES: Final = (25, 50, 75, 95)
"""The percentiles ``geotiff:stats`` stores per band (the spec's p25, p50, p75, p95)."""

Fetch = Callable[[str], pa.Table]
"""Runs SQL in the dataset's DuckDB session and returns the result as Arrow."""


def _position(name: str) -> int:
    return CONTINUOUS.index(name) + 1  # DuckDB lists are 1-based


def _bands_sql(source: str, has_weight: bool) -> str:
    stats = quote_ident(STATS_COLUMN)
    if has_weight:
        shape = quote_ident(WEIGHT_COLUMN)
        weight = (
            f"COALESCE(CAST({shape}[len({shape}) - 1] AS DOUBLE) * "
            f"CAST({shape}[len({shape})] AS DOUBLE), 1.0)"
        )
    else:
        weight = "1.0"
    return (
        f"WITH samples AS (SELECT {stats} AS s, {weight} AS pixels FROM ({source}) AS src "
        f"WHERE {stats} IS NOT NULL), "
        "bands AS (SELECT pixels, generate_subscripts(s, 1) AS band, UNNEST(s) AS v "
        "FROM samples) "
    )


def _continuous_sql(source: str, has_weight: bool, stat: str) -> str:
    base = _bands_sql(source, has_weight)
    valid = f"pixels * v[{_position('valid%')}] / 100.0"
    if stat == "min":
        value = f"MIN(v[{_position('min')}])"
    elif stat == "max":
        value = f"MAX(v[{_position('max')}])"
    elif stat == "std":
        mean, std = _position("mean"), _position("std")
        return (
            base + f", weighted AS (SELECT band, {valid} AS w, v[{mean}] AS m, v[{std}] AS s "
            "FROM bands WHERE v IS NOT NULL), "
            "centre AS (SELECT band, SUM(w * m) / SUM(w) AS g, SUM(w) AS n FROM weighted "
            "GROUP BY band) "
            "SELECT weighted.band - 1 AS band, "
            "sqrt((SUM(w * s * s) + SUM(w * (m - g) * (m - g))) / ANY_VALUE(n)) "
            "AS value FROM weighted JOIN centre USING (band) GROUP BY weighted.band "
            "ORDER BY weighted.band"
        )
    else:
        value = f"SUM({valid} * v[{_position(stat)}]) / SUM({valid})"
    return (
        base + f"SELECT band - 1 AS band, {value} AS value FROM bands WHERE v IS NOT NULL "
        "GROUP BY band ORDER BY band"
    )


def _categorical_sql(source: str, has_weight: bool) -> str:
    return (
        _bands_sql(source, has_weight)
        + ", classes AS (SELECT band, pixels, generate_subscripts(v, 1) AS k, UNNEST(v) AS p "
        "FROM bands WHERE v IS NOT NULL) "
        "SELECT band - 1 AS band, k - 1 AS class, SUM(pixels * p) / SUM(pixels) AS value "
        "FROM classes GROUP BY band, k ORDER BY band, k"
    )


def select_bands(values: np.ndarray, band: int | Sequence[int] | None, where: str) -> np.ndarray:
    if band is None:
        return values
    chosen = [band] if isinstance(band, int) else list(band)
    for b in chosen:
        if isinstance(b, bool) or not isinstance(b, (int, np.integer)) or not 0 <= b < len(values):
            raise TacoQueryError(f"{where}: band must be 0..{len(values) - 1} (0-based), got {b!r}")
    picked = values[chosen]
    return picked[0] if isinstance(band, int) else picked


def _layout(fetch: Fetch, source: str, where: str) -> int:
    stats = quote_ident(STATS_COLUMN)
    sql = (
        f"SELECT min(len(b)) AS lo, max(len(b)) AS hi, count(*) AS n FROM "
        f"(SELECT UNNEST({stats}) AS b FROM ({source}) AS src WHERE {stats} IS NOT NULL) "
        "WHERE b IS NOT NULL"
    )
    row = fetch(sql).to_pylist()[0]
    if not row["n"]:
        raise TacoQueryError(
            f"{where}: expected {STATS_COLUMN!r} values in the current view, found none "
            "(no rows after the filters, or every value is null)"
        )
    if row["lo"] != row["hi"]:
        raise TacoQueryError(
            f"{where}: expected the same number of values in every band of {STATS_COLUMN!r}, "
            f"found lists of {row['lo']} to {row['hi']}"
        )
    return int(row["lo"])


def aggregate_stats(
    fetch: Fetch,
    source: str,
    columns: Sequence[str],
    stat: str,
    band: int | Sequence[int] | None = None,
    *,
    categorical: bool | None = None,
    where: str = "stats",
) -> np.ndarray:
    """Aggregate ``geotiff:stats`` of the rows of ``source`` (SQL that DuckDB can select from).

    Args:
        fetch: runs a query in the session that knows ``source``.
        source: a ``SELECT`` or a view name.
        columns: the columns ``source`` has.
        stat: one of ``min max mean std p25 p50 p75 p95 categorical``.
        band: a 0-based band, a list of bands, or None for every band.
        categorical: whether the lists are class fractions; None: 9 values are not.
        where: names the dataset in errors.

    Returns:
        ``(bands,)`` floats, or ``(bands, classes)`` for ``categorical``
        (without the band axis when ``band`` is an int).

    Raises:
        TacoQueryError: no ``geotiff:stats`` column or value, a stat that does
            not fit the layout, an unknown stat, a band out of range.

    Example:
        >>> import duckdb, pyarrow as pa
        >>> rows = pa.table({"geotiff:stats": [[[0, 10, 4, 1, 100, 2, 4, 6, 8]],
        ...                                    [[1, 20, 8, 1, 100, 6, 8, 9, 9]]]})
        >>> con = duckdb.connect()
        >>> aggregate_stats(lambda q: con.sql(q).arrow().read_all(), "SELECT * FROM rows",
        ...                 rows.column_names, "mean").tolist()
        [6.0]
    """
    if stat not in _STATS:
        raise TacoQueryError(f"{where}: stat must be one of {list(_STATS)}, got {stat!r}")
    if STATS_COLUMN not in columns:
        raise TacoQueryError(
            f"{where}: expected a {STATS_COLUMN!r} column (GeotiffStats extension), found "
            f"columns {list(columns)}"
        )
    length = _layout(fetch, source, where)
    is_categorical = length != len(CONTINUOUS) if categorical is None else categorical
    if (stat == "categorical") != is_categorical:
        kind = "categorical (class fractions)" if is_categorical else "continuous"
        other = "stats_categorical()" if is_categorical else "stats_mean(), stats_std(), ..."
        raise TacoQueryError(
            f"{where}: {STATS_COLUMN!r} holds {kind} statistics ({length} values per band); "
            f"stats_{stat}() does not apply, use {other}"
        )
    has_weight = WEIGHT_COLUMN in columns
    if stat == "categorical":
        result = fetch(_categorical_sql(source, has_weight)).to_pydict()
        bands = max(result["band"]) + 1
        values = np.full((bands, length), np.nan)
        values[result["band"], result["class"]] = result["value"]
    else:
        result = fetch(_continuous_sql(source, has_weight, stat)).to_pydict()
        values = np.full(max(result["band"]) + 1, np.nan)
        values[result["band"]] = np.asarray(result["value"], dtype=np.float64)
    return select_bands(values, band, where)


def declared_categorical(collection: Any, level: int) -> bool | None:
    """True/False when ``taco:field_schema`` describes ``geotiff:stats`` as categorical."""
    fields = (collection.get(FIELD_SCHEMA_KEY) or {}).get(f"level{level}") or []
    for entry in fields:
        if isinstance(entry, (list, tuple)) and len(entry) >= 3 and entry[0] == STATS_COLUMN:
            text = str(entry[2]).lower()
            if "class fractions" in text:
                return True
            if "min, max" in text:
                return False
    return None


def view_stats(
    state: QueryState,
    stat: str,
    band: int | Sequence[int] | None,
    level: int,
    fetch: Fetch,
    columns_of: Callable[[str], Sequence[str]],
) -> np.ndarray:
    """:func:`aggregate_stats` over the current rows of ``state`` at ``level`` (``stats_*``)."""
    state.check_level(level)
    return aggregate_stats(
        fetch,
        descendants_sql(state, level, columns_of),
        columns_of(state.relation(level)),
        stat,
        band,
        categorical=declared_categorical(state.collection, level),
        where=f"{state.path} level {level}",
    )
