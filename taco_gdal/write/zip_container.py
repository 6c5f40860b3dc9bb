"""Write one TACO ZIP from a :class:`MetadataPackage`.

Member order (reference writer): ``TACO_HEADER``, every FILE sample depth first,
one ``__meta__`` per FOLDER (deepest level first), ``METADATA/levelN.parquet``,
``COLLECTION.json``. Offsets and sizes are what the ZipWriter measured, so they
are right whatever order the sibling ids sort in.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO, TypeVar, cast

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from taco_gdal._memory import release_memory
from taco_gdal.errors import TacoIOError, TacoValidationError
from taco_gdal.format.checksum import check_algorithm
from taco_gdal.format.header import HeaderEntry
from taco_gdal.format.names import (
    COLLECTION_FILE,
    DATA_DIR,
    LOCAL_META,
    MAX_LEVELS,
    level_member,
)
from taco_gdal.format.vsi import to_vsi
from taco_gdal.model._arrow import from_numpy
from taco_gdal.model.collection import collection_json_bytes, declare_checksum
from taco_gdal.model.package import MetadataPackage
from taco_gdal.write._atomic import atomic_file
from taco_gdal.write._copy import COPY_BLOCK, is_local, read_small_files
from taco_gdal.write._layout import Layout
from taco_gdal.write._parquet import (
    LEVEL_OPTIONS,
    MetaOptions,
    local_meta_options,
    parquet_bytes,
    parquet_file,
    parquet_options,
)
from taco_gdal.write._progress import progress_bar
from taco_gdal.write._tables import local_columns, rebuild_columns, stored_level, with_offsets
from taco_gdal.write.zipstream import LOCAL_BLOCK, MemberInfo, ZipWriter

__all__ = ["write_zip"]

log = logging.getLogger(__name__)

IntArray = npt.NDArray[np.int64]


class _Measured:
    """``internal:offset`` / ``internal:size`` (and digests) of every row, as written."""

    def __init__(self, layout: Layout, digest: str | None) -> None:
        rows = layout.counts_per_level
        self.offsets: list[IntArray] = [np.full(n, -1, np.int64) for n in rows]
        self.sizes: list[IntArray] = [np.full(n, -1, np.int64) for n in rows]
        self.digests: list[list[str | None]] | None = (
            None if digest is None else [[None] * n for n in rows]
        )

    def record_at(self, level: int, row: int, info: MemberInfo) -> None:
        """Record ``row``'s member and its digest."""
        self.offsets[level][row] = info.data_offset
        self.sizes[level][row] = info.size
        if self.digests is not None and info.digest is not None:
            self.digests[level][row] = info.digest

    def checksums(self, level: int) -> Sequence[str | None] | None:
        """``level``'s digests (None without a digest)."""
        return None if self.digests is None else self.digests[level]

    def drop(self, level: int) -> None:
        """Forget ``level``'s measurements once its Parquet is written."""
        self.offsets[level] = self.sizes[level] = np.empty(0, np.int64)
        if self.digests is not None:
            self.digests[level] = []

    def check_complete(self) -> None:
        for level, offsets in enumerate(self.offsets):
            missing = np.flatnonzero(offsets < 0)
            if missing.size:
                raise AssertionError(f"level{level} rows {missing[:5].tolist()} were not written")


DIRECT_MIN = COPY_BLOCK
"""Writes of at least this many bytes bypass the output's buffer."""


class _CountingFile:
    """A buffered output file whose ``tell()`` counts the bytes written (no ``lseek``).

    ``lseek`` releases the GIL, so with Parquet threads running the writer would
    wait for the GIL once per member.  Blocks of :data:`DIRECT_MIN` bytes or more (the
    copy blocks of large members) go straight to the file with ``pwrite`` instead of
    through the 1 MiB buffer, which would copy every byte of them once more.
    """

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw
        self._fd = raw.fileno()
        self._position = raw.tell()
        self._direct = False
        """The buffer is empty and the descriptor's offset is behind ``_position``."""

    def write(self, data: bytes | bytearray | memoryview) -> int:
        if (data.nbytes if isinstance(data, memoryview) else len(data)) >= DIRECT_MIN:
            view = memoryview(data).cast("B")
            if not self._direct:
                self._raw.flush()
                self._direct = True
            done = 0
            while done < len(view):
                done += os.pwrite(self._fd, view[done:], self._position + done)
        else:
            if self._direct:
                self._raw.seek(self._position)
                self._direct = False
            done = self._raw.write(data)
        self._position += done
        return done

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        if whence == os.SEEK_CUR:
            offset, whence = self._position + offset, os.SEEK_SET
        self._position = self._raw.seek(offset, whence)
        self._direct = False
        return self._position

    def tell(self) -> int:
        return self._position

    def flush(self) -> None:
        self._raw.flush()

    def fileno(self) -> int:
        return self._fd


def _write_files(
    writer: ZipWriter, layout: Layout, measured: _Measured, digest: str | None, bar: Any
) -> None:
    """Every FILE sample, depth first, a batch at a time; small local files read ahead."""
    for batch in layout.file_batches():
        sources = batch.sources
        rows = zip(batch.levels, batch.rows, batch.paths, sources, batch.padding, strict=True)
        for (level, row, path, source, padding), data in zip(
            rows, read_small_files(sources, LOCAL_BLOCK), strict=True
        ):
            name = f"{DATA_DIR}/{path}"
            if source is None:  # zero bytes; padding rows get no digest (null in the column)
                info = writer.add_bytes(name, b"", None if padding else digest)
            elif isinstance(data, bytes):
                info = writer.add_bytes(name, data, digest)
            elif data is not None:
                raise TacoIOError(f"cannot copy {source!r} into member {name!r}: {data}") from data
            else:
                local = is_local(source)
                info = writer.add_file(name, source if local else to_vsi(source), digest=digest)
            measured.record_at(level, row, info)
            bar.update(1)


T = TypeVar("T")
R = TypeVar("R")
_BATCH = 256
_IN_FLIGHT = 4
_NAMES_BATCH = 4096


def _map_in_order(fn: Callable[[T], R], items: Sequence[T], workers: int = 2) -> Iterator[R]:
    """``map(fn, items)`` on a small thread pool, in order, a bounded batch ahead."""

    def run(batch: Sequence[T]) -> list[R]:
        return [fn(item) for item in batch]

    batches = [items[i : i + _BATCH] for i in range(0, len(items), _BATCH)]
    with ThreadPoolExecutor(workers, thread_name_prefix="taco-parquet") as pool:
        pending: list[Future[list[R]]] = []
        for batch in batches:
            pending.append(pool.submit(run, batch))
            if len(pending) > _IN_FLIGHT:
                yield from pending.pop(0).result()
        for future in pending:
            yield from future.result()


def _local_level(layout: Layout, measured: _Measured, level: int) -> pa.Table:
    """Level ``level`` as its FOLDER parents' ``__meta__`` tables store it (sliced per parent)."""
    table = layout.levels[level].select(local_columns(layout.levels[level].column_names))
    return with_offsets(
        table, measured.offsets[level], measured.sizes[level], measured.checksums(level)
    )


def _write_local_meta(
    writer: ZipWriter, layout: Layout, measured: _Measured, options: MetaOptions, bar: Any
) -> None:
    """One ``__meta__`` per FOLDER, deepest level first (so children are measured first)."""
    for level in reversed(range(layout.depth)):
        folders = layout.folder_rows(level)
        if not folders.size:
            continue
        children = _local_level(layout, measured, level + 1)
        starts, counts = layout.starts[level][folders], layout.counts[level][folders]

        def serialise(
            i: int,
            children: pa.Table = children,
            starts: IntArray = starts,
            counts: IntArray = counts,
        ) -> bytes:
            # sliced here, a batch at a time: all slices held at once cost much memory
            n = int(counts[i])
            table = children.slice(int(starts[i]), n)
            return parquet_bytes(table, options.for_rows(n))

        blobs: Iterator[bytes] = _map_in_order(serialise, range(folders.size))
        paths = layout.rel[level]
        for first in range(0, folders.size, _NAMES_BATCH):
            rows = folders[first : first + _NAMES_BATCH]
            names = paths.take(from_numpy(rows)).to_pylist()
            for row, path, blob in zip(rows.tolist(), names, blobs, strict=False):
                info = writer.add_bytes(f"{DATA_DIR}/{path}{LOCAL_META}", blob)
                measured.record_at(level, row, info)
                bar.update(1)


@contextlib.contextmanager
def _level_spool(folder: Path) -> Iterator[str]:
    """An unnamed temporary file in ``folder`` (via ``/proc/self/fd``), removed on exit.

    A write killed while a level is spooled then leaves nothing beside the output;
    without ``/proc`` a named file is used.
    """
    with tempfile.TemporaryFile(dir=folder) as unnamed:
        path = f"/proc/self/fd/{unnamed.fileno()}"
        if os.path.exists(path):
            yield path
            return
    with tempfile.NamedTemporaryFile(dir=folder, prefix=".taco-level-") as named:
        yield named.name


def _write_levels(
    writer: ZipWriter,
    layout: Layout,
    measured: _Measured,
    options: Mapping[str, Any],
    spool_dir: Path,
    last_use: bool = False,
) -> list[HeaderEntry]:
    """The ``METADATA/levelN.parquet`` members, each through a temporary file.

    With ``last_use``, each level is dropped once written and rebuildable columns
    are made a row group at a time, so the largest level is compressed alone.
    """
    measured.check_complete()
    entries = []
    parent_paths: pa.Array | None = None
    for level in range(len(layout.levels)):
        stored = with_offsets(
            stored_level(layout.levels[level]),
            measured.offsets[level],
            measured.sizes[level],
            measured.checksums(level),
            copy=False,  # every row is measured: the arrays are final
        )
        rebuilt = None
        if last_use:
            # nothing reads the level again: kinds, row numbers and relative paths
            # are made a row group at a time while it is written, not held whole
            folder, paths = layout.folder[level], layout.rel[level]
            layout.drop_level(level)
            stored, rebuilt = rebuild_columns(stored, folder, parent_paths)
            parent_paths = paths if level < layout.depth else None
            del folder, paths
        with _level_spool(spool_dir) as spool:
            parquet_file(stored, spool, options, rebuilt)
            info = writer.add_file(level_member(level), spool)
        entries.append(HeaderEntry(info.data_offset, info.size))
        del stored, rebuilt
        if last_use:
            measured.drop(level)
        release_memory()  # the compressor's buffers, before the next (larger) level
    return entries


def write_zip(
    package: MetadataPackage,
    output: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    quiet: bool = False,
    parquet_kwargs: Mapping[str, Any] | None = None,
    checksum: str | None = None,
) -> Path:
    """Write ``package`` as one TACO ZIP at ``output``, atomically.

    Args:
        package: the dataset's metadata; FILE rows carry their source in ``path``.
        output: the ``.tacozip`` / ``.zip`` file to create.
        checksum: ``"crc32c"``, ``"xxh3"`` or ``"sha256"``: store a per-sample digest
            (``taco_gdal:checksum``) computed while copying; None stores none.

    Example:
        >>> write_zip(taco.metadata(), "new.tacozip")
        PosixPath('/.../new.tacozip')
    """
    return write_layout(
        Layout(package), package, output, overwrite=overwrite, quiet=quiet,
        parquet_kwargs=parquet_kwargs, checksum=checksum,
    )  # fmt: skip


def write_layout(
    layout: Layout,
    package: MetadataPackage,
    output: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    quiet: bool = False,
    parquet_kwargs: Mapping[str, Any] | None = None,
    checksum: str | None = None,
    last_use: bool = False,
) -> Path:
    """:func:`write_zip` for a package whose :class:`Layout` is already built.

    ``last_use``: nothing reads ``layout`` after this write, so its sources and
    levels are dropped as soon as they are written.
    """
    check_algorithm(checksum)
    if len(package.levels) > MAX_LEVELS:
        raise TacoValidationError(
            f"a TACO ZIP holds at most {MAX_LEVELS} levels, the dataset has {len(package.levels)}"
        )
    level_options = parquet_options(LEVEL_OPTIONS, parquet_kwargs)
    meta_options = local_meta_options(parquet_kwargs)
    # names are checked once, column-wise, instead of a set of every name in the writer
    layout.check_unique_members()
    release_memory()
    measured = _Measured(layout, checksum)
    target = Path(output).absolute()
    total = layout.sample_count
    log.info("writing %s (%d samples, %d levels)", target, total, len(layout.levels))
    with (
        progress_bar(total, f"writing {target.name}", quiet, unit="sample") as bar,
        atomic_file(target, overwrite) as f,
    ):
        writer = ZipWriter(cast(BinaryIO, _CountingFile(f)), check_names=False)
        writer.add_taco_header()
        _write_files(writer, layout, measured, checksum, bar)
        if last_use:
            layout.drop_sources()
        release_memory()
        _write_local_meta(writer, layout, measured, meta_options, bar)
        release_memory()
        entries = _write_levels(writer, layout, measured, level_options, target.parent, last_use)
        info = writer.add_bytes(
            COLLECTION_FILE, collection_json_bytes(declare_checksum(package.collection, checksum))
        )
        entries.append(HeaderEntry(info.data_offset, info.size))
        writer.set_header_entries(entries)
        writer.close()
    return target
