"""What a container is to the reader: a small protocol, a probe, a VSI rule.

A container turns a location into metadata: one Arrow table per level, the
COLLECTION.json dict, and the rule that builds each sample's GDAL path
(:class:`VsiRule`); everything else (DuckDB views, filters, navigation, concat) is
shared, so a plugin adds a format with one class satisfying :class:`Container`.
Detection asks every container in ``priority`` order, by name (no I/O), then by
content through one shared :class:`Probe` that caches what it read.
"""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, runtime_checkable

import pyarrow as pa

from taco_gdal._osgeo import gdal
from taco_gdal.errors import TacoIOError
from taco_gdal.format import vsi
from taco_gdal.io.vsi import VSIFile, is_plain_local

if TYPE_CHECKING:
    from taco_gdal.read.opening.containers._deferred import DeferredColumns

__all__ = [
    "PROBE_BYTES",
    "Container",
    "OpenedContainer",
    "Probe",
    "VsiKind",
    "VsiRule",
    "path_exists",
]

PROBE_BYTES = 256
"""Bytes a probe reads first: enough for a TACO_HEADER (157) or a __TACOCAT__ header (128)."""

VsiKind = Literal["subfile", "source_file", "folder", "stored"]


@dataclass(frozen=True, slots=True)
class VsiRule:
    """How ``internal:gdal_vsi`` is built for the rows of a level table.

    Attributes:
        kind: ``subfile`` (``/vsisubfile/{offset}_{size},{root}``), ``source_file``
            (``/vsisubfile/{offset}_{size},{root}/{internal:source_file}``),
            ``folder`` (``{root}/{relative_path or id}``, ``/__meta__`` for FOLDER
            rows) or ``stored`` (the column is already in the table).
        root: the archive, the TACOCAT base folder, or the folder holding the samples.

    Example:
        >>> VsiRule("subfile", "/data/x.tacozip").kind
        'subfile'
    """

    kind: VsiKind
    root: str = ""


def path_exists(path: str) -> bool:
    """Whether a GDAL path exists (one ``VSIStatL``, or one ``stat`` for a local path)."""
    if is_plain_local(path):
        return os.path.exists(path)
    try:
        stat = gdal.VSIStatL(path, gdal.VSI_STAT_EXISTS_FLAG)
    except RuntimeError:
        stat = None
    return stat is not None


class Probe:
    """A location being identified (a GDAL ``path``; ``given`` for messages), each read once.

    Example:
        >>> Probe("/data/x.tacozip", "/data/x.tacozip").name
        'x.tacozip'
    """

    def __init__(self, path: str, given: str) -> None:
        self.path = path.rstrip("/") if len(path) > 1 else path
        self.given = given
        self._stat: tuple[bool, bool] | None = None
        self._head: bytes | None = None
        self._exists: dict[str, bool] = {}

    @property
    def name(self) -> str:
        """Last path component (``x.tacozip``, ``.tacocat``, ``__TACOCAT__``)."""
        return posixpath.basename(self.path)

    def stat(self) -> tuple[bool, bool]:
        """``(exists, is_directory)``; one ``VSIStatL``."""
        if self._stat is None and is_plain_local(self.path):
            try:
                mode = os.stat(self.path).st_mode
            except OSError:
                self._stat = (False, False)
            else:
                self._stat = (True, stat.S_ISDIR(mode))
        if self._stat is None:
            flags = gdal.VSI_STAT_EXISTS_FLAG | gdal.VSI_STAT_NATURE_FLAG
            try:
                result = gdal.VSIStatL(self.path, flags)
            except RuntimeError:
                result = None
            self._stat = (False, False) if result is None else (True, bool(result.IsDirectory()))
        return self._stat

    def is_dir(self) -> bool:
        return self.stat()[1]

    def head(self) -> bytes:
        """Up to :data:`PROBE_BYTES` bytes from the start of the file (``b""`` for a folder)."""
        if self._head is None:
            if self._stat is not None and (not self._stat[0] or self._stat[1]):
                self._head = b""
            else:
                try:
                    with VSIFile(self.path) as f:
                        self._head = f.read_at(0, PROBE_BYTES)
                except TacoIOError:
                    self._head = b""
        return self._head

    def exists(self, relative: str) -> bool:
        """Whether ``relative`` exists below this location."""
        if relative not in self._exists:
            self._exists[relative] = path_exists(vsi.join(self.path, relative))
        return self._exists[relative]


@runtime_checkable
class Container(Protocol):
    """A storage format the reader can open.

    ``format`` is a short name; a lower ``priority`` is asked first.  A format with
    integrity checks of its own may add ``verify(level) ->
    Sequence[taco_gdal.verify.report.Failure]``, which :func:`taco_gdal.verify` calls.
    """

    format: ClassVar[str]
    priority: ClassVar[int]

    @property
    def path(self) -> str:
        """GDAL path of what was opened (the archive, folder or TACOCAT file)."""
        ...

    @property
    def levels(self) -> Sequence[pa.Table]:
        """Level tables as stored (level 0 first); ``id`` and ``type`` are checked."""
        ...

    @property
    def collection(self) -> dict[str, Any]:
        """The COLLECTION.json content."""
        ...

    @property
    def vsi_rule(self) -> VsiRule:
        """How the rows' ``internal:gdal_vsi`` is built."""
        ...

    @property
    def sources(self) -> Sequence[str]:
        """Where each level table came from, named in error messages."""
        ...

    @classmethod
    def claims(cls, probe: Probe) -> bool:
        """True when the name alone says this format (no I/O)."""
        ...

    @classmethod
    def detect(cls, probe: Probe) -> bool:
        """True when the content says this format (may read through ``probe``)."""
        ...

    @classmethod
    def open(cls, probe: Probe, base_path: str | None = None) -> Container:
        """Read the metadata.  ``base_path`` is only meaningful for TACOCAT."""
        ...


@dataclass(frozen=True)
class OpenedContainer:
    """The metadata every opened container holds: the data half of :class:`Container`.

    Example:
        >>> opened = OpenedContainer("/data/ds", [], {}, VsiRule("folder", "/data/ds/DATA"), [])
        >>> opened.vsi_rule.kind
        'folder'
    """

    path: str
    levels: Sequence[pa.Table]
    collection: dict[str, Any]
    vsi_rule: VsiRule
    sources: Sequence[str]
    deferred: Sequence[DeferredColumns | None] = ()
    """Per level, the columns ``levels`` lacks because they stay in the file until asked."""
