"""CAF -> TACO ZIP: each member becomes a FILE sample; bytes copied, never re-encoded."""

from __future__ import annotations

import os
from pathlib import Path

from taco_caf.container import LABEL, CafContainer
from taco_gdal.containers import Probe, to_taco, to_vsi

__all__ = ["caf_to_taco"]


def caf_to_taco(
    caf_path: str | os.PathLike[str],
    output: str | os.PathLike[str],
    dataset_id: str | None = None,
    overwrite: bool = False,
    quiet: bool = False,
) -> Path:
    """Convert a CAF archive into a TACO ZIP.

    Sample ids are the member names with ``/``, ``\\`` and ``:`` replaced by
    ``_``; the names themselves are kept in the ``member`` column.  The
    COLLECTION is derived (id from the file name, licenses ``["other"]``,
    version ``"unknown"``): edit it with ``taco_gdal`` afterwards if you know better.

    Args:
        caf_path: the archive (local or any GDAL-readable location).
        output: the ``.tacozip`` to write.
        dataset_id: COLLECTION id (default: from the archive's file name).
        overwrite: replace an existing output.
        quiet: no progress bar.

    Raises:
        CafFormatError: the archive is not valid CAF.
        TacoValidationError: a member name cannot become a sample id.
        TacoExistsError: ``output`` exists and ``overwrite`` is False.

    Example:
        >>> caf_to_taco("tiles.caf", "from_caf.tacozip")
        PosixPath('.../from_caf.tacozip')
    """
    given = os.fspath(caf_path)
    container = CafContainer.open(Probe(to_vsi(given), given))
    return to_taco(container, output, LABEL, dataset_id, overwrite, quiet)
