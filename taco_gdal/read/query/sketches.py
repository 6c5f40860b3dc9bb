"""``TacoDataset.stats``: per-band statistics of the valid pixels of a view, pooled.

With the ``taco_gdal:stats_sketch`` column (written by ``GeotiffStats``), mean and
standard deviation pool each sample's float64 count, mean and sum of squared
deviations (exact), and percentiles come from the merge of the samples' KLL
sketches: a percentile of the view's pixels within the merged sketch's normalized
rank error.  ``min`` and ``max`` are the extremes of ``geotiff:stats``.  A view
without sketches falls back to ``geotiff:stats`` alone: percentiles are then the
valid-pixel weighted mean of the samples' stored percentiles, which is not a
percentile of the data, and a :class:`~taco_gdal.errors.TacoApproximationWarning`
says so.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pyarrow as pa

from taco_gdal.errors import TacoApproximationWarning, TacoQueryError
from taco_gdal.format.names import STATS_SKETCH
from taco_gdal.read.query.sql import descendants_sql, quote_ident
from taco_gdal.read.query.stats import (
    PERCENTILES,
    STATS_COLUMN,
    aggregate_stats,
    declared_categorical,
    select_bands,
)

if TYPE_CHECKING:
    from taco_gdal.read.query.state import QueryState

__all__ = ["ViewStats", "stats_of_view"]

Fetch = Callable[[str], pa.Table]
SCALING: Final = {"scaling:scale_factor": 1.0, "scaling:scale_offset": 0.0}
"""Columns that make ``geotiff:stats`` physical values, and their identity values."""


@dataclass(frozen=True)
class ViewStats:
    """Statistics of the valid pixels of a view, per band (physical values under ``scaling:*``).

    Arrays have one entry per band, or none when one band (an int) was asked for;
    ``percentiles`` has a last axis of ``len(q)``.

    Attributes:
        mean: mean, exact (pooled from per-sample float64 moments when sketched).
        std: population standard deviation, exact like ``mean``.
        min: smallest valid pixel.
        max: largest valid pixel.
        q: the percentiles asked for, in 0..100.
        percentiles: the value of each percentile in ``q``.
        physical: rows carry ``scaling:scale_factor`` or ``scaling:scale_offset``
            other than 1 and 0, so the statistics are physical values, not the
            stored ones a raster read (or ``SampleDataset``) returns.
        rank_error: the normalized rank error of the merged sketches (99% confidence;
            0.0 when they hold every pixel): the fraction of pixels below a returned
            value is within this much of ``q / 100``.  None for the approximation
            of a dataset without sketches, whose error has no bound.  A merge
            compacts at random, so two calls may differ within this error.
    """

    mean: np.ndarray
    std: np.ndarray
    min: np.ndarray
    max: np.ndarray
    q: tuple[float, ...]
    percentiles: np.ndarray
    rank_error: float | None
    physical: bool = False

    def percentile(self, q: float) -> np.ndarray:
        """The values of percentile ``q`` (one of :attr:`q`).

        Raises:
            TacoQueryError: ``q`` was not asked for.
        """
        if q not in self.q:
            raise TacoQueryError(f"stats: expected q in {self.q} (the ones asked for), found {q!r}")
        return np.asarray(self.percentiles[..., self.q.index(q)])


def _checked_q(q: Sequence[float], where: str) -> tuple[float, ...]:
    values = (q,) if isinstance(q, (int, float)) else tuple(q)
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
            raise TacoQueryError(f"{where}: q expected numbers in 0..100, found {value!r}")
        if not 0 <= value <= 100:
            raise TacoQueryError(f"{where}: q expected numbers in 0..100, found {value!r}")
    return values


def _unsketched(fetch: Fetch, source: str, columns: Sequence[str]) -> int | None:
    """Rows with statistics but no sketch; None when the column is absent."""
    if STATS_SKETCH not in columns:
        return None
    sql = (
        f"SELECT count(*) AS n FROM ({source}) AS src WHERE {quote_ident(STATS_COLUMN)} "
        f"IS NOT NULL AND {quote_ident(STATS_SKETCH)} IS NULL"
    )
    return int(fetch(sql).column("n")[0].as_py())


def _physical(fetch: Fetch, source: str, columns: Sequence[str]) -> bool:
    """Whether any row scales its values (``scaling:*`` other than the identity)."""
    for column, identity in SCALING.items():
        if column in columns:
            name = quote_ident(column)
            found = fetch(f"SELECT DISTINCT {name} AS v FROM ({source}) WHERE {name} IS NOT NULL")
            for value in found.column("v").to_pylist():
                if any(v != identity for v in (value if isinstance(value, list) else [value])):
                    return True
    return False


def _sketch_rows(fetch: Fetch, source: str, with_kll: bool) -> pa.Table:
    column = quote_ident(STATS_SKETCH)
    fields = ", ".join(
        f"struct_extract(v, '{name}') AS {name}"
        for name in ("count", "mean", "m2", *(("kll",) if with_kll else ()))
    )
    return fetch(
        f"SELECT band - 1 AS band, {fields} FROM (SELECT generate_subscripts(s, 1) AS band, "
        f"UNNEST(s) AS v FROM (SELECT {column} AS s FROM ({source}) AS src "
        f"WHERE {column} IS NOT NULL)) WHERE v IS NOT NULL"
    )


def _moments(rows: pa.Table, bands: int) -> tuple[np.ndarray, np.ndarray]:
    """Pooled mean and standard deviation per band (Chan et al.'s parallel formula)."""
    band = rows.column("band").to_numpy()
    count = rows.column("count").to_numpy().astype(np.float64)
    mean = rows.column("mean").to_numpy()
    total = np.bincount(band, count, bands)
    with np.errstate(invalid="ignore", divide="ignore"):
        grand = np.bincount(band, count * mean, bands) / total
        spread = np.bincount(band, rows.column("m2").to_numpy(), bands)
        spread += np.bincount(band, count * np.square(mean - grand[band]), bands)
        return grand, np.sqrt(spread / total)


def _merged_percentiles(
    rows: pa.Table, bands: int, q: tuple[float, ...]
) -> tuple[np.ndarray, float]:
    from datasketches import kll_floats_sketch

    values = np.full((bands, len(q)), np.nan)
    error = 0.0
    if not q:
        return values, error
    band = rows.column("band").to_numpy()
    blobs = rows.column("kll").to_pylist()
    for b in range(bands):
        merged: Any = None
        for index in np.flatnonzero(band == b):
            part = kll_floats_sketch.deserialize(blobs[index])
            if merged is None:
                merged = part
            else:
                merged.merge(part)
        if merged is None:
            continue
        values[b] = merged.get_quantiles([v / 100 for v in q], inclusive=True)
        if merged.is_estimation_mode():
            error = max(error, float(merged.normalized_rank_error(False)))
    return values, error


def _approximated(
    aggregate: Callable[[str], np.ndarray], q: tuple[float, ...], where: str
) -> np.ndarray:
    missing = [v for v in q if v not in PERCENTILES]
    if missing:
        raise TacoQueryError(
            f"{where}: without {STATS_SKETCH!r} (write the dataset with GeotiffStats() "
            f"of this version) only q in {PERCENTILES} can be approximated, found {missing}"
        )
    warnings.warn(
        f"{where}: rows of the view lack {STATS_SKETCH!r} sketches; percentiles {list(q)} are the "
        "valid-pixel weighted mean of the samples' stored percentiles, an approximation "
        "that is not a percentile of the data (rewrite with GeotiffStats for exact ones)",
        TacoApproximationWarning,
        stacklevel=4,
    )
    return np.stack([aggregate(f"p{int(v)}") for v in q], axis=-1)


def stats_of_view(
    state: QueryState,
    band: int | Sequence[int] | None,
    q: Sequence[float],
    level: int,
    fetch: Fetch,
    columns_of: Callable[[str], Sequence[str]],
) -> ViewStats:
    """:class:`ViewStats` of the current rows of ``state`` at ``level`` (``TacoDataset.stats``).

    Raises:
        TacoQueryError: no ``geotiff:stats`` in the view, categorical statistics, a
            band out of range, ``q`` outside 0..100, or (without sketches) a ``q``
            that ``geotiff:stats`` does not store.
    """
    state.check_level(level)
    where = f"{state.path} level {level}"
    wanted = _checked_q(q, where)
    source = descendants_sql(state, level, columns_of)
    columns = columns_of(state.relation(level))
    aggregate = functools.partial(
        aggregate_stats,
        fetch,
        source,
        columns,
        categorical=declared_categorical(state.collection, level),
        where=where,
    )
    low, high = aggregate("min"), aggregate("max")
    if _unsketched(fetch, source, columns) == 0:
        rows = _sketch_rows(fetch, source, with_kll=bool(wanted))
        mean, std = _moments(rows, len(low))
        percentiles, error = _merged_percentiles(rows, len(low), wanted)
        ends = np.asarray(wanted)
        percentiles[:, ends == 0], percentiles[:, ends == 100] = low[:, None], high[:, None]
        rank_error: float | None = error
    else:
        mean, std = aggregate("mean"), aggregate("std")
        percentiles = _approximated(aggregate, wanted, where) if wanted else np.empty((len(low), 0))
        rank_error = None
    return ViewStats(
        mean=select_bands(mean, band, where),
        std=select_bands(std, band, where),
        min=select_bands(low, band, where),
        max=select_bands(high, band, where),
        q=wanted,
        percentiles=select_bands(percentiles, band, where),
        rank_error=rank_error,
        physical=_physical(fetch, source, columns),
    )
