"""The hand-off between the data model and the writers.

``Taco.metadata()`` (in :mod:`taco_gdal.model`) produces a :class:`MetadataPackage`;
the ZIP and FOLDER writers consume it.  It is all Arrow: no per-row Python
objects survive beyond the ``Sample`` objects the user made.

Level tables (``levels[i]``), columns in this order:

* ``id`` (string), ``type`` (string, ``FILE``/``FOLDER``)
* the user and extension columns of that level, in their schema order:
  insertion order (sample fields in the order they were added, then tortilla
  extension columns), taken from the first tortilla of the level, at *every*
  level.  tacotoolbox 0.26.9 sorts level-1+ columns alphabetically; taco_gdal
  does not, so a dataset reads back in the order it was described (readers
  select columns by name, so both orders load in either reader).
* ``internal:current_id`` (int64, 0..n-1, row position in the level)
* ``internal:parent_id`` (int64; level 0: equal to current_id; level k>0: the
  parent's ``internal:current_id`` in level k-1)
* ``internal:relative_path`` (string, levels >= 1 only): path under ``DATA/``,
  ``"{parent relative path}{id}"``; FOLDER rows end with ``/`` (``tile0/s1/``),
  FILE rows do not (``tile0/s1/b0``).  Level 0 rows have no such column; their
  path under ``DATA/`` is the id (plus ``/`` for a FOLDER).
* ``path`` (string): where the writer copies a FILE sample's bytes from (a local
  path or any GDAL VSI path); null for FOLDER rows and for zero-byte padding
  samples (``__TACOPAD__N``).  Writers never store this column.

Rows are in depth-first sample order grouped by parent: the rows of level k+1
are the children of level k's row 0, then of row 1, and so on.  The ZIP writer
adds ``internal:offset`` and ``internal:size`` (int64) between ``parent_id`` and
``relative_path``, measured from the bytes it wrote.

``collection`` is the COLLECTION.json content (a JSON-ready dict, keys in the
order the reference writes them) including ``taco:pit_schema`` and
``taco:field_schema``.
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
    """Bytes of each row's source (0 for FOLDER and padding rows), when already known.

    ``Taco.metadata()`` fills it from the sizes its Samples found when they were
    made, so splitting by size does not stat every source again; other packages
    leave it None and the writer asks the sources.
    """

    @property
    def depth(self) -> int:
        """Index of the deepest level (0 for a flat dataset)."""
        return len(self.levels) - 1
