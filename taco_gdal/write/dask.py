"""Write a dataset's parts as Dask tasks, then commit them and the TACOCAT from the client.

Each task writes its part atomically under a temporary name beside the target
and returns its metadata; Dask re-runs failed tasks. Only when all succeeded
does the client rename the parts into place and write the TACOCAT, so a failure
commits nothing. The output folder must have the same path on client and workers.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from taco_gdal.errors import TacoError, TacoIOError, TacoValidationError
from taco_gdal.model.package import MetadataPackage
from taco_gdal.write._atomic import commit, fsync_directory
from taco_gdal.write._layout import Layout
from taco_gdal.write._partition import (
    Part,
    WriteOptions,
    remove_output,
    subset_package,
    write_part,
)
from taco_gdal.write._sources import DatasetMetadata, read_folder_metadata, read_zip_metadata
from taco_gdal.write.tacocat import write_tacocat

if TYPE_CHECKING:
    from taco_gdal.model.sample import Sample

__all__ = ["PartResult", "samples_on_workers", "write_parts_dask"]

log = logging.getLogger(__name__)

TASK_PREFIX = "taco-write-part"
"""Dask key prefix of the part tasks (``taco-write-part-<run>-<index>``)."""
_TMP_PART = ".taco-part-"

T = TypeVar("T")


@dataclass(frozen=True)
class PartResult:
    """What a part task returns: where it wrote, and the part's metadata as stored."""

    index: int
    temporary: Path
    metadata: DatasetMetadata


def _write_part_task(
    index: int, package: MetadataPackage, options: WriteOptions, temporary: str
) -> PartResult:
    """Runs on a worker: write one part to its temporary name, return its stored metadata."""
    layout = Layout(package)
    whole = Part(Path(temporary), None)
    task_options = WriteOptions(
        options.fmt, True, True, options.parquet_kwargs, options.checksum
    )  # overwrite: a retried task replaces its own temporary part
    path = write_part(package, layout, whole, task_options, Path(temporary))
    read = read_zip_metadata if options.fmt == "zip" else read_folder_metadata
    return PartResult(index, path, read(path))


def _check_client(client: Any) -> None:
    if not callable(getattr(client, "submit", None)) or not callable(
        getattr(client, "gather", None)
    ):
        raise TacoValidationError(
            f"client must be a dask.distributed.Client, found {type(client).__name__}"
        )


def write_parts_dask(
    client: Any,
    package: MetadataPackage,
    layout: Layout,
    parts: Sequence[Part],
    options: WriteOptions,
    consolidating: bool,
    retries: int = 3,
) -> list[Path]:
    """Write ``parts`` as Dask tasks, commit them, then write their TACOCAT.

    ``retries`` is per part task (a killed worker counts as a failure); returns
    the committed parts in part order.

    Example:
        >>> from dask.distributed import Client, LocalCluster
        >>> cluster = LocalCluster(n_workers=1, processes=False, dashboard_address="127.0.0.1:0")
        >>> client = Client(cluster)  # on a real cluster: worker processes on many machines
        >>> taco_gdal.create(taco, "out.tacozip", client=client, partitions=2, quiet=True)
        [PosixPath('/.../out_part0001.tacozip'), PosixPath('/.../out_part0002.tacozip')]
        >>> client.close(); cluster.close()
    """
    _check_client(client)
    run = uuid.uuid4().hex[:12]
    temporaries = [part.path.with_name(f"{_TMP_PART}{run}-{part.path.name}") for part in parts]
    futures = []
    for index, (part, temporary) in enumerate(zip(parts, temporaries, strict=True)):
        subset = package if part.rows is None else subset_package(package, layout, part.rows)
        futures.append(
            client.submit(
                _write_part_task,
                index,
                subset,
                options,
                str(temporary),
                key=f"{TASK_PREFIX}-{run}-{index:05d}",
                retries=retries,
                pure=False,
            )
        )
    log.info("submitted %d part tasks (run %s)", len(futures), run)
    try:
        results: list[PartResult] = client.gather(futures)
    except BaseException as exc:
        for future in futures:
            future.cancel()
        for temporary in temporaries:
            remove_output(temporary)
        if isinstance(exc, TacoError | KeyboardInterrupt):
            raise
        raise TacoIOError(
            f"writing {len(parts)} parts on Dask (run {run}): a part task failed after "
            f"{retries} retries: {type(exc).__name__}: {exc}"
        ) from exc
    return _commit_all(parts, results, options, consolidating)


def _commit_all(
    parts: Sequence[Part],
    results: Sequence[PartResult],
    options: WriteOptions,
    consolidating: bool,
) -> list[Path]:
    committed: list[Path] = []
    try:
        for part, result in zip(parts, results, strict=True):
            commit(result.temporary, part.path, options.overwrite)
            committed.append(part.path)
        fsync_directory(parts[0].path.parent)
        if consolidating:
            write_tacocat(
                [r.metadata for r in results],
                [p.path.name for p in parts],
                parts[0].path.parent,
                overwrite=options.overwrite,
            )
    except BaseException:
        for path in committed:
            remove_output(path)
        for result in results:
            remove_output(result.temporary)
        raise
    return committed


def _run_batch(build: Callable[[T], Sample], items: Sequence[T]) -> list[Sample]:
    return [build(item) for item in items]


def samples_on_workers(
    client: Any,
    build: Callable[[T], Sample],
    items: Iterable[T],
    batch_size: int = 1000,
    retries: int = 3,
) -> list[Sample]:
    """``[build(item) for item in items]`` computed on the Dask workers, in order.

    Samples must point at paths the writer can reach (shared file system,
    ``/vsis3/``, ``/vsicurl/``...); ``bytes`` samples cannot travel.

    Example:
        >>> from dask.distributed import Client, LocalCluster
        >>> from taco_gdal.extensions import GeotiffStats
        >>> from taco_gdal.model import Sample
        >>> cluster = LocalCluster(n_workers=1, processes=False, dashboard_address="127.0.0.1:0")
        >>> client = Client(cluster)
        >>> def make(path):
        ...     return Sample(Path(path).stem, path).extend_with(GeotiffStats())
        >>> samples = samples_on_workers(client, make, sorted(Path("scenes").glob("*.tif")))
        >>> [sample.id for sample in samples]
        ['scene0', 'scene1', 'scene2']
        >>> client.close(); cluster.close()
    """
    _check_client(client)
    if batch_size < 1:
        raise TacoValidationError(f"batch_size must be >= 1, found {batch_size!r}")
    values = list(items)
    batches = [values[i : i + batch_size] for i in range(0, len(values), batch_size)]
    futures = [
        client.submit(_run_batch, build, batch, retries=retries, pure=False) for batch in batches
    ]
    samples: list[Sample] = []
    for batch in client.gather(futures):
        samples.extend(batch)
    return samples
