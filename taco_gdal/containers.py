"""The public contract of a container plugin: everything a plugin imports, in one place.

A container plugin teaches :func:`taco_gdal.load` a storage format.  It is a
class satisfying :class:`Container` (usually a subclass of
:class:`OpenedContainer` with ``format``, ``priority`` and the class methods
``claims``, ``detect`` and ``open``), declared under the entry point group
``taco_gdal.containers`` of the plugin's distribution::

    [project.entry-points."taco_gdal.containers"]
    caf = "taco_caf:CafContainer"

or made known in one process with :func:`register`.  The in-tree plugins
(``taco_caf``, ``taco_taridx``, ``taco_v1``, ``taco_cozip``) import from this
module only, so what it exports is what an out-of-tree plugin can rely on:

* the protocol and its values: :class:`Container`, :class:`OpenedContainer`,
  :class:`Probe`, :class:`VsiRule`, :data:`VsiKind`, :data:`PROBE_BYTES`,
  :func:`path_exists`;
* the registry: :func:`register`, :func:`available`, :data:`ENTRY_POINT_GROUP`;
* byte access through GDAL: :class:`VSIFile`, :func:`read_all`,
  :func:`read_range`, :func:`file_size`, :func:`to_vsi`, :func:`join_vsi`, :func:`parent_vsi`,
  :func:`build_subfile`;
* Parquet bytes for Arrow's threaded readers: :func:`owned_reader` (a copy in Arrow's
  memory: a buffer that wraps Python bytes can abort the process at exit);
* writing: :func:`atomic_file` (a file that appears complete or not at all);
* formats without TACO metadata: :func:`derived_collection`, :func:`described_collection`,
  :func:`core_fields`,
  :func:`dataset_id`, :func:`sample_id`, :func:`to_taco`, :data:`MEMBER_COLUMN`;
* untrusted JSON: :func:`loads_json`, the one bounded parser every container's JSON
  documents go through (size, nesting depth :data:`MAX_JSON_DEPTH` and number length
  :data:`MAX_NUMBER_DIGITS` limited; only TacoFormatError escapes);
* the error taxonomy and the column names of the TACO spec.

Example:
    >>> from taco_gdal.containers import OpenedContainer, VsiRule
    >>> OpenedContainer("/d/x.caf", [], {}, VsiRule("subfile", "/d/x.caf"), []).vsi_rule.kind
    'subfile'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from taco_gdal.derived import (
    MEMBER_COLUMN,
    UNKNOWN_VERSION,
    core_fields,
    dataset_id,
    derived_collection,
    described_collection,
    sample_id,
    to_taco,
)
from taco_gdal.errors import (
    TacoError,
    TacoExistsError,
    TacoFormatError,
    TacoIOError,
    TacoValidationError,
)
from taco_gdal.format.names import (
    CURRENT_ID,
    FILE,
    FOLDER,
    GDAL_VSI,
    ID,
    INTERNAL_PREFIX,
    OFFSET,
    PARENT_ID,
    RELATIVE_PATH,
    SIZE,
    SOURCE_FILE,
    STAC_CENTROID,
    STAC_TIME_START,
    TACO_VERSION,
    TYPE,
)
from taco_gdal.format.vsi import build_subfile, to_vsi
from taco_gdal.format.vsi import join as join_vsi
from taco_gdal.format.vsi import parent as parent_vsi
from taco_gdal.io.arrowbuf import owned_reader
from taco_gdal.io.vsi import VSIFile, file_size, read_all, read_range
from taco_gdal.read.opening.containers._limits import (
    MAX_JSON_DEPTH,
    MAX_NUMBER_DIGITS,
    loads_json,
)
from taco_gdal.read.opening.containers.base import (
    PROBE_BYTES,
    Container,
    OpenedContainer,
    Probe,
    VsiKind,
    VsiRule,
    path_exists,
)
from taco_gdal.read.opening.containers.registry import ENTRY_POINT_GROUP, available, register

if TYPE_CHECKING:
    from taco_gdal.write._atomic import atomic_file


def __getattr__(name: str) -> Any:
    # The writer is imported when a plugin writes, not when load() asks the plugins
    # what they read: ``load`` imports every plugin's contract before detecting.
    if name == "atomic_file":
        from taco_gdal.write._atomic import atomic_file

        return atomic_file
    raise AttributeError(f"module 'taco_gdal.containers' has no attribute {name!r}")


__all__ = [
    "CURRENT_ID",
    "ENTRY_POINT_GROUP",
    "FILE",
    "FOLDER",
    "GDAL_VSI",
    "ID",
    "INTERNAL_PREFIX",
    "MAX_JSON_DEPTH",
    "MAX_NUMBER_DIGITS",
    "MEMBER_COLUMN",
    "OFFSET",
    "PARENT_ID",
    "PROBE_BYTES",
    "RELATIVE_PATH",
    "SIZE",
    "SOURCE_FILE",
    "STAC_CENTROID",
    "STAC_TIME_START",
    "TACO_VERSION",
    "TYPE",
    "UNKNOWN_VERSION",
    "Container",
    "OpenedContainer",
    "Probe",
    "TacoError",
    "TacoExistsError",
    "TacoFormatError",
    "TacoIOError",
    "TacoValidationError",
    "VSIFile",
    "VsiKind",
    "VsiRule",
    "atomic_file",
    "available",
    "build_subfile",
    "core_fields",
    "dataset_id",
    "derived_collection",
    "described_collection",
    "file_size",
    "join_vsi",
    "loads_json",
    "owned_reader",
    "parent_vsi",
    "path_exists",
    "read_all",
    "read_range",
    "register",
    "sample_id",
    "to_taco",
    "to_vsi",
]
