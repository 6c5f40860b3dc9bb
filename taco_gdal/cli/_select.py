"""Row selection shared by ``ls``, ``export`` and ``index``: level, SQL, box, time.

``--bbox`` and ``--datetime`` are the dataset's ``filter_bbox`` / ``filter_datetime``
at the listed level; ``--where`` is a predicate over that level's columns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click

from taco_gdal.errors import TacoQueryError

if TYPE_CHECKING:
    import pyarrow as pa

    from taco_gdal.read.dataset import TacoDataset

__all__ = ["Selection", "load_at_level", "load_selected", "parse_bbox", "selection_options"]

F = TypeVar("F", bound=Callable[..., Any])
Box = tuple[float, float, float, float]


def parse_bbox(text: str | None) -> Box | None:
    """``"xmin,ymin,xmax,ymax"`` -> four floats (``None`` stays ``None``).

    Raises:
        click.BadParameter: not four comma-separated numbers.

    Example:
        >>> parse_bbox("-4,40,-3.5,41")
        (-4.0, 40.0, -3.5, 41.0)
    """
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",")]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = []
    if len(values) != 4:
        raise click.BadParameter(
            f"expected xmin,ymin,xmax,ymax (four numbers), found {text!r}", param_hint="--bbox"
        )
    if values[0] > values[2]:
        click.echo(
            f"taco: note: --bbox {text}: xmin {values[0]:g} > xmax {values[2]:g}, read as a box "
            f"that crosses the antimeridian (from {values[0]:g} east across 180 to "
            f"{values[2]:g}); swap them for the box between",
            err=True,
        )
    return values[0], values[1], values[2], values[3]


@dataclass(frozen=True)
class Selection:
    """Which rows a verb works on.

    Attributes:
        level: the hierarchy level listed (0 = root samples).
        where: SQL predicate over that level's columns.
        bbox: box in the geometry column's coordinates (EPSG:4326 for centroids).
        datetime: ISO 8601 range ``start/end`` (``..`` for an open end).
    """

    level: int = 0
    where: str | None = None
    bbox: Box | None = None
    datetime: str | None = None

    def apply(self, ds: TacoDataset) -> TacoDataset:
        """The dataset narrowed by the level-0 ``where``, the box and the time range."""
        if self.where is not None and self.level == 0:
            ds = ds.sql(f"SELECT * FROM data WHERE {self.where}")
        if self.bbox is not None:
            ds = ds.filter_bbox(*self.bbox, level=self.level)
        if self.datetime is not None:
            ds = ds.filter_datetime(self.datetime, level=self.level)
        return ds

    def rows(self, ds: TacoDataset) -> pa.Table:
        """The selected rows of ``ds`` (already narrowed by :meth:`apply`) at ``level``."""
        table = ds.to_arrow(self.level)
        if self.where is None or self.level == 0:
            return table
        return _where(table, self.where, f"level{self.level} of {ds.path}")


def _where(table: pa.Table, predicate: str, where: str) -> pa.Table:
    import duckdb

    connection = duckdb.connect()
    try:
        connection.register("rows", table)
        return connection.execute(f"SELECT * FROM rows WHERE {predicate}").fetch_arrow_table()
    except duckdb.Error as exc:
        raise TacoQueryError(f"--where {predicate!r} on {where}: {exc}") from exc
    finally:
        connection.close()


def selection_options(fn: F) -> F:
    """Add ``--level``, ``--where``, ``--bbox``, ``--datetime`` to a verb."""
    options = [
        click.option("--level", type=click.IntRange(0, 5), default=0, help="Hierarchy level."),
        click.option("--where", metavar="SQL", help="SQL predicate over the level's columns."),
        click.option(
            "--bbox",
            metavar="XMIN,YMIN,XMAX,YMAX",
            help="Keep samples whose geometry intersects the box (EPSG:4326 for centroids); "
            "XMIN > XMAX is a box that crosses the antimeridian (170,-10,-170,10).",
        ),
        click.option(
            "--datetime",
            "datetime_",
            metavar="START/END",
            help="Keep samples starting in the range (ISO 8601, '..' for an open end).",
        ),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def load_selected(
    path: str, level: int, where: str | None, bbox: str | None, datetime_: str | None
) -> tuple[TacoDataset, Selection]:
    """Load ``path`` and narrow it; return the dataset and the selection used.

    Raises:
        TacoQueryError: ``level`` is deeper than the dataset, or a filter cannot run.

    Example:
        >>> ds, sel = load_selected("tiles.tacozip", 1, None, "-4,40,-3,41", None)
        >>> sel.rows(ds).num_rows
        4
    """
    from taco_gdal.read.load import load

    ds = load(path)
    if level > ds.max_depth:
        raise TacoQueryError(f"--level must be 0..{ds.max_depth} for {ds.path}, got {level}")
    selection = Selection(level, where, parse_bbox(bbox), datetime_)
    return selection.apply(ds), selection


def load_at_level(
    path: str, level: int, where: str | None, bbox: str | None, datetime_: str | None
) -> TacoDataset:
    """Load ``path`` for a verb that writes every sample at ``level``: ``--where`` narrows
    the level-0 samples, ``--bbox`` and ``--datetime`` those at ``level``.

    Example:
        >>> load_at_level("tiles.tacozip", 1, None, None, "2023-01-01/2023-01-02").max_depth
        1
    """
    ds, _ = load_selected(path, 0, where, None, None)
    return Selection(level, None, parse_bbox(bbox), datetime_).apply(ds)
