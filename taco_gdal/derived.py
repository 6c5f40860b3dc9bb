"""What a container without TACO metadata derives: a COLLECTION and a TACO ZIP.

Formats such as CAF or TARIDX list members and byte ranges only, so a plugin
derives a COLLECTION (:func:`derived_collection`) and, for conversion, a TACO ZIP
(:func:`to_taco`). Plugins reach these through :mod:`taco_gdal.containers`.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pyarrow as pa

from taco_gdal.errors import TacoValidationError
from taco_gdal.format.names import CURRENT_ID, GDAL_VSI, ID, INTERNAL_PREFIX, TACO_VERSION, TYPE

if TYPE_CHECKING:
    from taco_gdal.model import Sample
    from taco_gdal.read.opening.containers.base import Container

__all__ = [
    "MEMBER_COLUMN",
    "UNKNOWN_VERSION",
    "core_fields",
    "dataset_id",
    "derived_collection",
    "described_collection",
    "sample_id",
    "to_taco",
]

UNKNOWN_VERSION: Final = "unknown"
"""``dataset_version`` of a derived dataset: the source format records none."""

_NOT_ID: Final = re.compile(r"[^a-z0-9_-]+")


def dataset_id(path: str) -> str:
    """A valid dataset id from a file name: its stem, lowercased, other characters as ``-``.

    Example:
        >>> dataset_id("/data/Sentinel 2.caf")
        'sentinel-2'
    """
    stem = posixpath.basename(path.rstrip("/")).split(".", 1)[0]
    return _NOT_ID.sub("-", stem.lower()).strip("-") or "dataset"


def core_fields(path: str, label: str) -> dict[str, Any]:
    """The COLLECTION fields a user would normally supply, derived from ``path``.

    ``label`` says what the container is, for the description (``"CAF archive"``).

    Example:
        >>> core_fields("/data/x.caf", "CAF archive")["licenses"]
        ['other']
    """
    name = posixpath.basename(path.rstrip("/"))
    return {
        "id": dataset_id(path),
        "dataset_version": UNKNOWN_VERSION,
        "description": (
            f"Derived by taco_gdal from the {label} {name}: one FILE sample per member, "
            "with the member's name and byte range and no other metadata."
        ),
        "licenses": ["other"],
        "providers": [],
        "tasks": ["other"],
    }


def derived_collection(
    level0: pa.Table, path: str, label: str, descriptions: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """COLLECTION.json content for a flat container described by ``level0``.

    Includes ``taco:pit_schema`` and ``taco:field_schema`` computed from the table;
    ``descriptions`` name the container's columns and may reword internal ones.

    Example:
        >>> table = pa.table({"id": ["a"], "type": ["FILE"]})
        >>> derived_collection(table, "/data/x.caf", "CAF archive")["id"]
        'x'
    """
    from taco_gdal.format.names import FIELD_SCHEMA_KEY

    wanted = dict(descriptions or {})
    collection = described_collection([level0], core_fields(path, label), descriptions=wanted)
    for entry in collection[FIELD_SCHEMA_KEY]["level0"]:
        entry[2] = wanted.get(entry[0], entry[2])
    return collection


def described_collection(
    levels: list[pa.Table],
    core: Mapping[str, Any],
    extras: Mapping[str, Any] | None = None,
    descriptions: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A TACO 2 COLLECTION for level tables read from another generation (v1, v3).

    ``core`` gives the required keys (missing ones are ``None``), ``extras`` other
    keys to carry; the PIT and field schemas are computed from ``levels``.

    Example:
        >>> table = pa.table({"id": ["a"], "type": ["FILE"]})
        >>> described_collection([table], {"id": "x"})["taco:pit_schema"]["root"]
        {'n': 1, 'type': 'FILE'}
    """
    from taco_gdal.model.collection import field_schema, order_collection
    from taco_gdal.model.pit import pit_schema

    core = {**core, "taco_version": TACO_VERSION}
    fields = field_schema(list(levels), dict(descriptions or {}))
    return order_collection(core, dict(extras or {}), pit_schema(list(levels)), fields)


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
    from taco_gdal.read.dataset import TacoDataset

    dataset = TacoDataset.from_container(container)
    try:
        frame = dataset.frame(internal=True).sort_values(CURRENT_ID)
    finally:
        dataset.close()
    return [str(path) for path in frame[GDAL_VSI]]


def _sample(name: str, path: str, metadata: dict[str, Any], where: str) -> Sample:
    from taco_gdal.model import Sample

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

    Each level-0 row becomes a FILE sample whose path is its ``/vsisubfile/``
    range; ids are the member names made valid (:func:`sample_id`), the names kept
    in ``member`` beside the container's own non-internal columns.

    Args:
        container: an opened container (e.g. ``CafContainer.open(probe)``).
        output: the ``.tacozip`` (or ``.zip``) to write.
        label: what the source is, for the derived description.
        dataset_id: the COLLECTION id (default: from the source's file name).

    Raises:
        TacoValidationError: a member name cannot be a sample id, or two names map
            to the same id.
        TacoExistsError: ``output`` exists and ``overwrite`` is False.

    Example:
        >>> from taco_caf import CafContainer
        >>> from taco_gdal.read.opening.containers.base import Probe
        >>> to_taco(CafContainer.open(Probe("tiles.caf", "tiles.caf")), "x.tacozip", "CAF archive")
        PosixPath('.../x.tacozip')
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
    from taco_gdal.model import Taco, Tortilla
    from taco_gdal.write.create import create

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
