"""A tacoreader user's habits: Arrow and Polars frames, protected columns, a typed PIT schema.

Frames refuse to overwrite ``id``, ``type`` and ``internal:*`` (navigation and
GDAL paths are built from them), as tacoreader 2.x does.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pandas as pd
import pyarrow as pa

from taco_gdal.errors import TacoDependencyError, TacoQueryError
from taco_gdal.format.names import ID, INTERNAL_PREFIX, TYPE

if TYPE_CHECKING:
    import polars

__all__ = [
    "PROTECTED_COLUMNS",
    "PitLevel",
    "PitSchema",
    "check_assignment",
    "frame_to_arrow",
    "masked_columns",
    "to_polars",
]

PROTECTED_COLUMNS: Final = frozenset({ID, TYPE})
"""Columns a frame never lets you overwrite, besides every ``internal:*`` column."""
GEOMETRY: Final = "geometry"


def check_assignment(key: object, where: str = "TacoDataFrame") -> None:
    """Refuse to assign a protected column (``id``, ``type``, ``internal:*``).

    Raises:
        TacoQueryError: ``key`` (or one of several keys) is protected.

    Example:
        >>> check_assignment("cloud_cover")
        >>> check_assignment("internal:offset")  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        TacoQueryError: ...
    """
    keys = list(key) if isinstance(key, (list, tuple, pd.Index)) else [key]
    for name in keys:
        if not isinstance(name, str):
            continue
        if name in PROTECTED_COLUMNS or name.startswith(INTERNAL_PREFIX):
            raise TacoQueryError(
                f"{where}: column {name!r} is protected (expected a column other than "
                f"{sorted(PROTECTED_COLUMNS)} and internal:*, found an assignment to {name!r}); "
                "navigation and GDAL paths are built from it. Assign to a new column, or "
                "convert with .to_arrow() / pandas.DataFrame(frame) to edit freely"
            )


def masked_columns(frame: pd.DataFrame, key: object, value: object) -> list[object] | None:
    """The columns ``frame[key] = value`` changes when ``key`` is a boolean mask, else None.

    A missing value written over missing cells changes nothing, so geopandas'
    ``properties[pd.isna(properties)] = None`` touches no protected column.

    Example:
        >>> import pandas as pd
        >>> f = pd.DataFrame({"id": ["a", "b"], "x": [1.0, None]})
        >>> masked_columns(f, pd.isna(f).values, None), masked_columns(f, "x", 0)
        ([], None)
        >>> masked_columns(f, f.notna().values, 0)
        ['id', 'x']
    """
    if isinstance(key, pd.DataFrame):
        if not all(pd.api.types.is_bool_dtype(kind) for kind in key.dtypes):
            return None
        mask = key.reindex(index=frame.index, columns=frame.columns, fill_value=False)
        cells = mask.to_numpy(dtype=bool)
    elif isinstance(key, np.ndarray | pd.Series) and key.dtype == bool:
        cells = np.asarray(key, dtype=bool)
        if cells.ndim == 1 and len(cells) == len(frame):
            cells = np.repeat(cells[:, None], frame.shape[1], axis=1)
        if cells.shape != frame.shape:
            return None
    else:
        return None
    if pd.api.types.is_scalar(value) and bool(pd.isna(value)):  # type: ignore[call-overload]
        cells = cells & ~pd.isna(frame).to_numpy(dtype=bool)
    written: np.ndarray = np.asarray(cells.any(axis=0), dtype=bool)
    return list(frame.columns[written])


def assigned_columns(frame: pd.DataFrame, key: object, positional: bool) -> list[object]:
    """The column labels a ``.loc``/``.iloc``/``.at``/``.iat`` assignment with ``key`` writes.

    Example:
        >>> import pandas as pd
        >>> f = pd.DataFrame({"id": ["a"], "x": [1]})
        >>> assigned_columns(f, (0, "x"), positional=False), assigned_columns(f, (0, 0), True)
        (['x'], ['id'])
    """
    if not isinstance(key, tuple) or len(key) < 2:
        return list(frame.columns)
    columns = key[1]
    if positional or isinstance(columns, slice):
        selected = frame.columns[columns] if positional else frame.loc[:, columns].columns
        return list(np.atleast_1d(np.asarray(selected, dtype=object)))
    if pd.api.types.is_list_like(columns):
        values = np.asarray(columns)
        if values.dtype == bool:
            return list(frame.columns[values])
        return list(values)
    return [columns]


class GuardedIndexer:
    """A pandas indexer whose assignments refuse protected columns; reads pass through."""

    def __init__(self, indexer: Any, frame: pd.DataFrame, positional: bool) -> None:
        self._indexer = indexer
        self._frame = frame
        self._positional = positional

    def __getitem__(self, key: Any) -> Any:
        return self._indexer[key]

    def __getattr__(self, name: str) -> Any:  # pandas calls its indexers' internals
        return getattr(self._indexer, name)

    def __setitem__(self, key: Any, value: Any) -> None:
        check_assignment(assigned_columns(self._frame, key, self._positional))
        self._indexer[key] = value

    def __call__(self, axis: Any = None) -> GuardedIndexer:
        return GuardedIndexer(self._indexer(axis), self._frame, self._positional)


def frame_to_arrow(frame: pd.DataFrame) -> pa.Table:
    """A frame's rows as Arrow: the index dropped, a GeoDataFrame's geometry as WKB.

    Example:
        >>> import pandas as pd
        >>> frame_to_arrow(pd.DataFrame({"id": ["a"]})).column_names
        ['id']
    """
    plain = pd.DataFrame(frame, copy=False)
    if GEOMETRY in plain.columns and hasattr(frame, "geometry"):
        import shapely

        plain = plain.assign(**{GEOMETRY: shapely.to_wkb(frame[GEOMETRY].to_numpy())})
    return pa.Table.from_pandas(plain, preserve_index=False)


def to_polars(table: pa.Table) -> polars.DataFrame:
    """An Arrow table as a Polars frame (Polars is an optional extra).

    Raises:
        TacoDependencyError: Polars is not installed.

    Example:
        >>> to_polars(pa.table({"id": ["a"]})).shape
        (1, 1)
    """
    try:
        import polars
    except ImportError as exc:
        raise TacoDependencyError(
            "to_polars() needs polars (expected it importable, found none): "
            "pip install 'taco_gdal[polars]'"
        ) from exc
    frame = polars.from_arrow(table)
    assert isinstance(frame, polars.DataFrame)
    return frame


@dataclass(frozen=True)
class PitLevel:
    """One level below the root: how many children a parent has and of which types and ids.

    Example:
        >>> PitLevel(2, ({"n": 2, "type": ["FILE", "FILE"], "id": ["a", "b"]},)).children
        2
    """

    depth: int
    patterns: tuple[Mapping[str, Any], ...]

    @property
    def children(self) -> int:
        """Children per parent in the first pattern (all patterns agree under PIT)."""
        if not self.patterns:
            return 0
        first = self.patterns[0]
        return len(first.get("type") or []) or int(first.get("n") or 0)

    @property
    def types(self) -> tuple[str, ...]:
        """Child types of the first pattern."""
        return tuple(self.patterns[0].get("type") or []) if self.patterns else ()

    @property
    def ids(self) -> tuple[str, ...]:
        """Child ids of the first pattern."""
        return tuple(self.patterns[0].get("id") or []) if self.patterns else ()


@dataclass(frozen=True)
class PitSchema(Mapping[str, Any]):
    """``taco:pit_schema`` as a value (root type and count, levels, max depth), read like a dict.

    Example:
        >>> pit = PitSchema.from_dict({"root": {"n": 3, "type": "FOLDER"}, "shape": [3, 2],
        ...     "hierarchy": {"1": [{"n": 6, "type": ["FILE", "FILE"], "id": ["a", "b"]}]}})
        >>> pit.root_type, pit.max_depth, pit.levels[0].ids, pit["root"]["n"]
        ('FOLDER', 1, ('a', 'b'), 3)
    """

    root_type: str | None
    root_count: int
    levels: tuple[PitLevel, ...]
    stored: Mapping[str, Any] = field(repr=False, compare=True)

    @classmethod
    def from_dict(cls, value: Mapping[str, Any] | None) -> PitSchema:
        stored = copy.deepcopy(dict(value or {}))
        root = stored.get("root") or {}
        hierarchy = stored.get("hierarchy") or {}
        levels = tuple(
            PitLevel(int(depth), tuple(patterns))
            for depth, patterns in sorted(hierarchy.items(), key=lambda kv: int(kv[0]))
        )
        return cls(root.get("type"), int(root.get("n") or 0), levels, stored)

    @property
    def max_depth(self) -> int:
        """Deepest level below the root (0 for flat datasets)."""
        return len(self.levels)

    @property
    def children_per_level(self) -> tuple[int, ...]:
        """Children per parent at levels 1..max_depth."""
        return tuple(level.children for level in self.levels)

    def to_dict(self) -> dict[str, Any]:
        """The stored dict (a copy)."""
        return copy.deepcopy(dict(self.stored))

    def __getitem__(self, key: str) -> Any:
        return self.stored[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.stored)

    def __len__(self) -> int:
        return len(self.stored)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):  # a PitSchema reads as its stored dict
            return dict(self.stored) == dict(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.root_type, self.root_count, self.children_per_level))
