"""An opened derived container written out as a TACO ZIP, bytes copied, never re-encoded."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Final

from taco_derived.collection import core_fields
from taco_gdal.errors import TacoValidationError
from taco_gdal.format.names import CURRENT_ID, GDAL_VSI, ID, INTERNAL_PREFIX, TYPE
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.read.containers.base import Container
from taco_gdal.read.dataset import TacoDataset
from taco_gdal.write.create import create

__all__ = ["MEMBER_COLUMN", "sample_id", "to_taco"]

MEMBER_COLUMN: Final = "member"
"""Metadata column of a converted dataset: the member name as the source stored it."""

_SEPARATORS: Final = re.compile(r"[/\\:]")


def sample_id(name: str) -> str:
    r"""A TACO sample id for a member name: ``/``, ``\`` and ``:`` become ``_``.

    Example:
        >>> sample_id("tiles/a.tif")
        'tiles_a.tif'
    """
    return _SEPARATORS.sub("_", name)


def _gdal_paths(container: Container) -> list[str]:
    """Each level-0 row's GDAL path, built by the reader (the one place that builds them)."""
    dataset = TacoDataset.from_container(container)
    try:
        frame = dataset.data.sort_values(CURRENT_ID)
    finally:
        dataset.close()
    return [str(path) for path in frame[GDAL_VSI]]


def _sample(name: str, path: str, metadata: dict[str, Any], where: str) -> Sample:
    fields: dict[str, Any] = {MEMBER_COLUMN: name, **metadata}
    try:
        return Sample(sample_id(name), path, **fields)
    except TacoValidationError as exc:
        raise TacoValidationError(
            f"{where}: member {name!r} cannot become a TACO sample: {exc}"
        ) from exc


def to_taco(
    container: Container,
    output: str | os.PathLike[str],
    label: str,
    dataset_id: str | None = None,
    overwrite: bool = False,
    quiet: bool = False,
) -> Path:
    """Write the samples of a flat derived container as one TACO ZIP.

    Every level-0 row becomes a FILE :class:`~taco_gdal.model.Sample` whose
    path is the row's ``/vsisubfile/`` range; the ZIP writer copies those bytes
    through GDAL's VSI layer.  Sample ids are the member names made valid
    (:func:`sample_id`); the names themselves are kept in ``member``, next to
    the container's own non-internal columns.

    Args:
        container: an opened container (e.g. ``CafContainer.open(probe)``).
        output: the ``.tacozip`` (or ``.zip``) to write.
        label: what the source is, for the derived description.
        dataset_id: the COLLECTION id (default: from the source's file name).
        overwrite: replace an existing output.
        quiet: no progress bar.

    Raises:
        TacoValidationError: a member name cannot be a sample id (e.g. it starts
            with ``__``), or two names map to the same id.
        TacoExistsError: ``output`` exists and ``overwrite`` is False.

    Example:
        >>> to_taco(CafContainer.open(probe), "x.tacozip", "CAF archive")  # doctest: +SKIP
        PosixPath('x.tacozip')
    """
    table = container.levels[0]
    extra = [c for c in table.column_names if c not in (ID, TYPE, MEMBER_COLUMN)]
    extra = [c for c in extra if not c.startswith(INTERNAL_PREFIX)]
    names = [str(name) for name in table.column(ID).to_pylist()]
    rows = table.select(extra).to_pylist()
    samples = [
        _sample(name, path, row, container.path)
        for name, path, row in zip(names, _gdal_paths(container), rows, strict=True)
    ]
    core = core_fields(container.path, label)
    if dataset_id is not None:
        core["id"] = dataset_id
    taco = Taco(Tortilla(samples), **core)
    written = create(
        taco,
        output,
        output_format="zip",
        split_size=None,
        consolidate=False,
        overwrite=overwrite,
        quiet=quiet,
    )
    return written[0]
