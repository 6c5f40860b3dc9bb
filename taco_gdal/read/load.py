"""``load()``: from a path (or several) to a TacoDataset."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from taco_gdal.errors import TacoValidationError
from taco_gdal.format.vsi import to_vsi
from taco_gdal.read.opening._preload import ImportsBeside
from taco_gdal.read.opening.containers import registry
from taco_gdal.read.opening.containers.base import Probe
from taco_gdal.read.opening.hub import resolve_location

if TYPE_CHECKING:
    from taco_gdal.read.dataset import TacoDataset

__all__ = ["load"]

log = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]


def load(
    path: PathLike | Sequence[PathLike],
    base_path: PathLike | None = None,
    *,
    sql_external_access: bool = False,
) -> TacoDataset:
    """Open a TACO dataset; a list of paths is loaded and concatenated.

    The format (ZIP, FOLDER, TACOCAT, or a container plugin's: TACO v1, CoZIP,
    CAF, TARIDX) is detected from the name, then from the content.  Paths may be
    local, ``http(s)://``, ``s3://``, ``gs://``, ``az://``, ``hf://datasets/...``
    (see :mod:`taco_gdal.read.opening.hub`) or GDAL VSI paths.  Only metadata is
    read, through GDAL.

    Args:
        path: one location, or a list of them (concatenated with
            :func:`taco_gdal.concat` in ``intersection`` mode).
        base_path: TACOCAT only: where the source ZIPs are (default: the
            folder holding the TACOCAT).
        sql_external_access: let ``sql()`` read files and URLs (off by default:
            see :meth:`TacoDataset.with_sql_external_access`).

    Raises:
        TacoIOError: the location does not exist or cannot be read.
        TacoFormatError: it is not a TACO dataset, or its bytes are wrong
            (truncated archive, header past the end, parquet without ``id``).
        TacoValidationError: an empty list, ``base_path`` for a non-TACOCAT, a
            ``tacofoundation:`` catalogue id (the message says how to open it)
            or a malformed ``hf://`` URL.

    Example:
        >>> import taco_gdal
        >>> ds = taco_gdal.load(url)  # url: dataset.tacozip on a Range server on 127.0.0.1
        >>> ds.data.read(0)
        '/vsisubfile/196_622,/vsicurl/http://127.0.0.1:.../dataset.tacozip'
        >>> ds = taco_gdal.load("s3://bucket/dataset.tacozip")  # real bucket  # doctest: +SKIP
        >>> ds.data.read(0)  # needs S3 credentials and a real bucket  # doctest: +SKIP
        '/vsisubfile/196_622,/vsis3/bucket/dataset.tacozip'
    """
    if isinstance(path, Sequence) and not isinstance(path, str):
        paths = list(path)
        if not paths:
            raise TacoValidationError("load() needs a path or a non-empty list of paths, got []")
        if len(paths) == 1:
            return load(paths[0], base_path, sql_external_access=sql_external_access)
        from taco_gdal.read.concat import concat

        return concat([load(p, base_path, sql_external_access=sql_external_access) for p in paths])
    given = os.fspath(path)
    probe = Probe(to_vsi(resolve_location(given)), given)
    container_class = registry.detect(probe)
    if base_path is not None and container_class.format != "tacocat":
        raise TacoValidationError(
            f"base_path applies to TACOCAT datasets only; {given} is a {container_class.format}"
        )
    log.info("loading %s as %s", probe.path, container_class.format)
    with ImportsBeside():
        container = container_class.open(probe, None if base_path is None else os.fspath(base_path))
    from taco_gdal.read.dataset import TacoDataset

    return TacoDataset.from_container(container, sql_external_access=sql_external_access)
