"""The hand-off between the data model (``Taco.metadata()``) and the ZIP/FOLDER writers.

Level tables (``levels[i]``), columns in this order:

* ``id``, ``type`` (``FILE``/``FOLDER``);
* the level's user and extension columns in insertion order, from its first
  tortilla (tacotoolbox sorts level-1+ columns; readers select by name, so both load);
* ``internal:current_id`` (row position) and ``internal:parent_id`` (the parent's
  ``current_id`` in level k-1; at level 0 the row itself);
* ``internal:relative_path`` (levels >= 1): path under ``DATA/``, ``/``-terminated
  for FOLDER rows;
* ``path``: where a FILE's bytes are copied from (null for FOLDER and padding rows);
  writers never store it.

Rows of level k+1 are the children of level k's row 0, then row 1, and so on.
``collection`` is the JSON-ready COLLECTION.json dict, in the reference's key order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

__all__ = ["MetadataPackage"]


@dataclass(frozen=True)
class MetadataPackage:
    """Metadata of a whole dataset, one Arrow table per level, plus COLLECTION.json."""

    levels: list[pa.Table]
    collection: dict[str, Any]
    file_sizes: list[npt.NDArray[np.int64]] | None = field(default=None, compare=False)
    """Bytes of each row's source (0 for FOLDER/padding) when known, so a writer need
    not stat every source again; None lets the writer ask the sources."""

    @property
    def depth(self) -> int:
        """Index of the deepest level (0 for a flat dataset)."""
        return len(self.levels) - 1
