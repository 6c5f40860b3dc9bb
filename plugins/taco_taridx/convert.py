"""Tar shards (through their ``.taridx``) -> TACO ZIP; bytes copied, never re-encoded."""

from __future__ import annotations

import os
from pathlib import Path

from taco_gdal.containers import Probe, to_taco, to_vsi
from taco_taridx.container import LABEL, TarIdxContainer

__all__ = ["tar_to_taco"]


def tar_to_taco(
    taridx_path: str | os.PathLike[str],
    output: str | os.PathLike[str],
    dataset_id: str | None = None,
    overwrite: bool = False,
    quiet: bool = False,
) -> Path:
    """Convert the tar shards a ``.taridx`` indexes into one TACO ZIP.

    One FILE sample per member, in index order; ids are the member names with
    ``/``, ``\\`` and ``:`` replaced by ``_``, and the ``key``, ``ext`` and
    ``member`` (original name) columns are kept.  Index plain shards first with
    :func:`~taco_taridx.write_taridx`.

    Args:
        taridx_path: the index (its shards beside it).
        output: the ``.tacozip`` to write.
        dataset_id: COLLECTION id (default: from the index's file name).
        overwrite: replace an existing output.
        quiet: no progress bar.

    Raises:
        TaridxFormatError: the index is invalid or does not describe its shards.
        TacoValidationError: a member name cannot become a sample id, or two do
            (a tar may hold one name twice).
        TacoExistsError: ``output`` exists and ``overwrite`` is False.

    Example:
        >>> tar_to_taco("train.taridx", "train.tacozip")
        PosixPath('.../train.tacozip')
    """
    given = os.fspath(taridx_path)
    container = TarIdxContainer.open(Probe(to_vsi(given), given))
    return to_taco(container, output, LABEL, dataset_id, overwrite, quiet)
