"""QueryState: everything a dataset's query is, as one immutable, picklable value.

The DuckDB objects that run it are a cache built from it on demand
(:mod:`taco_gdal.read.query._duck`) in whatever process holds it, so filters, ``sql()``
and ``concat()`` return new states, and a pickled state never reads the container again.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pyarrow as pa

from taco_gdal.errors import TacoQueryError
from taco_gdal.read.opening.containers._deferred import LoadedLevels
from taco_gdal.read.opening.containers.base import VsiRule

__all__ = ["LevelTables", "QueryState", "RowSet", "Step", "level_view", "new_view_name"]


def new_view_name(stem: str = "v") -> str:
    """A view name unique across processes (states are pickled and rebuilt elsewhere).

    Example:
        >>> len(new_view_name())
        14
    """
    return f"{stem}_{secrets.token_hex(6)}"


def level_view(level: int) -> str:
    """Name of the whole-level view ``level<k>`` (padding hidden, GDAL paths built)."""
    return f"level{level}"


@dataclass(frozen=True, eq=False)
class LevelTables:
    """The prepared level tables of one load (level 0 first) and how to build GDAL paths.

    Compared by identity: every dataset derived from one load shares this object,
    hence one DuckDB session.  Deferred binary columns (see
    :mod:`taco_gdal.read.opening.containers._deferred`) are decoded on first need.

    Example:
        >>> import pyarrow as pa
        >>> base = LevelTables((pa.table({"id": ["a"]}),), VsiRule("stored"), "/data/x")
        >>> base.rows
        (1,)
    """

    loaded: LoadedLevels | tuple[pa.Table, ...]
    rule: VsiRule
    where: str
    sql_external_access: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.loaded, LoadedLevels):
            object.__setattr__(self, "loaded", LoadedLevels(tuple(self.loaded)))

    @property
    def loaded_levels(self) -> LoadedLevels:
        levels = self.loaded
        assert isinstance(levels, LoadedLevels)  # __post_init__ made it one
        return levels

    @property
    def depth(self) -> int:
        return len(self.loaded_levels)

    @property
    def tables(self) -> tuple[pa.Table, ...]:
        """Every level whole (deferred columns are decoded now)."""
        return tuple(self.table(level) for level in range(self.depth))

    def table(self, level: int) -> pa.Table:
        """Level ``level`` whole (its deferred columns are decoded now if they were not)."""
        return self.loaded_levels.table(level)

    def light(self, level: int) -> pa.Table:
        """Level ``level`` as decoded so far (without columns still deferred)."""
        return self.loaded_levels.light(level)

    def pending(self, level: int) -> tuple[str, ...]:
        """Columns of ``level`` still in the file."""
        return self.loaded_levels.pending(level)

    def schema(self, level: int) -> pa.Schema:
        """Level ``level``'s whole schema, decoding nothing."""
        return self.loaded_levels.schema(level)

    def take(self, level: int, name: str, positions: Any) -> pa.Array | pa.ChunkedArray:
        """Column ``name`` of ``level`` at row ``positions`` (see :meth:`LoadedLevels.take`)."""
        return self.loaded_levels.take(level, name, positions)

    def column(self, level: int, name: str) -> pa.ChunkedArray:
        """One column of ``level`` (decodes the deferred ones only when ``name`` is one)."""
        return self.loaded_levels.column(level, name)

    def with_external_access(self, enabled: bool) -> LevelTables:
        """The same tables (decoded once for both) with ``sql_external_access`` set."""
        return replace(self, sql_external_access=enabled)

    @property
    def rows(self) -> tuple[int, ...]:
        """Rows of each level table (padding included)."""
        return tuple(self.light(level).num_rows for level in range(self.depth))

    @property
    def nbytes(self) -> int:
        """Bytes of the level tables in memory: what pickling a dataset sends."""
        return self.loaded_levels.nbytes


@dataclass(frozen=True)
class RowSet:
    """Row positions a step keeps, as a value: DuckDB sees them as a one-column table.

    Stored as little-endian int64 bytes, so that it pickles and compares cheaply.

    Example:
        >>> import numpy as np
        >>> RowSet.of(np.array([3, 1])).positions().tolist()
        [3, 1]
    """

    rows: bytes

    @classmethod
    def of(cls, positions: Any) -> RowSet:
        import numpy as np

        return cls(np.asarray(positions, dtype="<i8").tobytes())

    def positions(self) -> Any:
        """The positions as a numpy int64 array (read-only, no copy)."""
        import numpy as np

        return np.frombuffer(self.rows, dtype="<i8")

    def __repr__(self) -> str:
        return f"RowSet({len(self.rows) // 8} rows)"


@dataclass(frozen=True)
class Step:
    """One view of a query: its SQL, bound values, level and display text.

    ``params`` maps DuckDB variable names (``getvariable``) to values; a :class:`RowSet`
    is registered as a table of that name (column ``row``).  Only a filter's first step
    has ``text``.
    """

    view: str
    sql: str
    level: int
    params: tuple[tuple[str, Any], ...] = ()
    text: str | None = None
    spatial: bool = False
    keeps_rows: bool = False
    """True for a filter: the view is its source's rows, some removed, nothing else changed."""
    rows: RowSet | None = None
    """For a level-0 filter decided in numpy: the stored row positions it keeps (sorted)."""


@dataclass(frozen=True)
class QueryState:
    """A dataset's whole query, immutable: tables, COLLECTION, steps and current views.

    ``view`` is the current level-0 view; ``level_views`` the current view of
    each deeper level a filter touched (others are ``level<k>``).

    Example:
        >>> import pyarrow as pa
        >>> base = LevelTables((pa.table({"id": ["a"]}),), VsiRule("stored"), "/data/x")
        >>> QueryState(base, {"id": "x"}, "zip").relation(0)
        'level0'
    """

    base: LevelTables
    collection: Mapping[str, Any]
    format: str
    steps: tuple[Step, ...] = ()
    view: str = "level0"
    level_views: tuple[tuple[int, str], ...] = field(default=())

    @property
    def path(self) -> str:
        return self.base.where

    @property
    def max_depth(self) -> int:
        return self.base.depth - 1

    def check_level(self, level: object) -> None:
        """Raise :class:`TacoQueryError` unless ``level`` is an int in ``0..max_depth``."""
        if (
            isinstance(level, bool)
            or not isinstance(level, int)
            or not 0 <= level <= self.max_depth
        ):
            raise TacoQueryError(
                f"level must be 0..{self.max_depth} for {self.path}, got {level!r}"
            )

    @property
    def views(self) -> dict[int, str]:
        """Current view of each filtered level below 0."""
        return dict(self.level_views)

    @property
    def descriptions(self) -> list[str]:
        """The human text of each user step, in order."""
        return [step.text for step in self.steps if step.text is not None]

    @property
    def only_filters(self) -> bool:
        """True when every step only removes rows (no ``sql()`` reshaped anything)."""
        return all(step.keeps_rows for step in self.steps)

    def relation(self, level: int) -> str:
        """The current view of ``level``."""
        if level == 0:
            return self.view
        return self.views.get(level, level_view(level))

    def then(
        self,
        steps: Sequence[Step],
        view: str | None = None,
        level_views: Mapping[int, str] | None = None,
    ) -> QueryState:
        """A new state with ``steps`` appended and new current views (``None``: unchanged)."""
        return replace(
            self,
            steps=(*self.steps, *steps),
            view=self.view if view is None else view,
            level_views=self.level_views
            if level_views is None
            else tuple(sorted(level_views.items())),
        )

    def with_base(self, base: LevelTables) -> QueryState:
        """The same query over another ``LevelTables`` (e.g. with external access on)."""
        return replace(self, base=base)
