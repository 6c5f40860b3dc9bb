"""Write one TACO ZIP from a :class:`MetadataPackage`.

Member order (reference writer): ``TACO_HEADER``, every FILE sample depth
first, one ``__meta__`` per FOLDER (deepest level first), ``METADATA/levelN.parquet``,
``COLLECTION.json``.  Every ``internal:offset`` / ``internal:size`` is taken from
what :class:`~taco_gdal.write.zipstream.ZipWriter` measured while writing, row by
row, so offsets are right whatever order the sibling ids sort in.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO, Final, TypeVar, cast

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from taco_gdal.errors import TacoIOError, TacoValidationError
from taco_gdal.format.checksum import (
    BatchDigest,
    batch_digest,
    check_algorithm,
    stored_ascii,
    value_call,
)
from taco_gdal.format.header import HeaderEntry
from taco_gdal.format.names import (
    COLLECTION_FILE,
    DATA_DIR,
    LOCAL_META,
    MAX_LEVELS,
    level_member,
)
from taco_gdal.format.vsi import to_vsi
from taco_gdal.model._arrow import ascii_rows_array, from_numpy, string_array
from taco_gdal.model.collection import collection_json_bytes
from taco_gdal.model.package import MetadataPackage
from taco_gdal.write._atomic import atomic_file
from taco_gdal.write._digest_thread import MemberDigests, start_member_digests
from taco_gdal.write._late import LateDigest, settle_digests
from taco_gdal.write._layout import Layout
from taco_gdal.write._memory import release_memory
from taco_gdal.write._parquet import (
    LEVEL_OPTIONS,
    MetaOptions,
    local_meta_options,
    parquet_bytes,
    parquet_file,
    parquet_options,
)
from taco_gdal.write._progress import progress_bar
from taco_gdal.write._readahead import Prefetched, is_local, read_small_files
from taco_gdal.write._tables import local_columns, rebuild_columns, stored_level, with_offsets
from taco_gdal.write.zipstream import LOCAL_BLOCK, MemberInfo, ZipWriter, readable_fd

__all__ = ["write_zip"]

log = logging.getLogger(__name__)

IntArray = npt.NDArray[np.int64]


class _Measured:
    """``internal:offset`` / ``internal:size`` (and digests) of every row, as written."""

    def __init__(self, layout: Layout, digest: str | None) -> None:
        rows = layout.counts_per_level
        self.offsets: list[IntArray] = [np.full(n, -1, np.int64) for n in rows]
        self.sizes: list[IntArray] = [np.full(n, -1, np.int64) for n in rows]
        self.digests: list[list[str | LateDigest | None]] | None = (
            None if digest is None else [[None] * n for n in rows]
        )
        self.late: list[list[int]] = [[] for _ in rows]
        """Rows of each level whose digest is a :class:`LateDigest` (not settled yet)."""
        self.algorithm = digest
        self.batch = None if digest is None else batch_digest(digest)
        self.helper: MemberDigests | None = None
        """What digests small members off the writing thread (SHA-256), started by
        :meth:`start_helper`."""
        self.helper_factory: Callable[[], MemberDigests | None] | None = None
        """Starts :attr:`helper` (set by the writer)."""
        self.batched_rows: list[list[int]] = [[] for _ in rows]
        self.batched: list[list[int]] = [[] for _ in rows]
        """Rows of each level digested together (small files) and, for each, its
        integer digest (:attr:`batch`); or only the rows, when :attr:`helper`
        digests them (found by their position, :meth:`record_found`): formatted a
        level at once by :meth:`checksums`."""
        self.strings = [False] * len(rows)
        """Whether a level holds other digests (large members, zero-byte samples)."""

    def start_helper(self) -> MemberDigests | None:
        """:attr:`helper`, started on first use: at the first small member, so a write
        of large members only starts no helper process (its start took CPU from the
        digest thread, which digests large members ahead of their copies)."""
        if self.helper is None and self.helper_factory is not None:
            self.helper, self.helper_factory = self.helper_factory(), None
        return self.helper

    def record_at(self, level: int, row: int, info: MemberInfo, batched: int | None = None) -> None:
        """Record ``row``'s member; its digest is ``info``'s, or ``batched`` (:attr:`batched`)."""
        self.offsets[level][row] = info.data_offset
        self.sizes[level][row] = info.size
        if batched is not None:
            self.batched_rows[level].append(row)
            self.batched[level].append(batched)
            return
        digest = info.digest
        if self.digests is not None and digest is not None:
            self.digests[level][row] = digest
            self.strings[level] = True
            if type(digest) is not str:
                self.late[level].append(row)

    def record_found(self, level: int, row: int, info: MemberInfo) -> None:
        """Record ``row``'s member, whose digest :attr:`helper` finds by its position."""
        self.offsets[level][row] = info.data_offset
        self.sizes[level][row] = info.size
        self.batched_rows[level].append(row)

    def checksums(self, level: int) -> Sequence[str | None] | pa.Array | None:
        """``level``'s digests; a late one (SHA-256, finished by the digest thread or
        the helper process) is waited for here, and only those rows are visited."""
        if self.digests is None or self.algorithm is None:
            return None
        values = self.digests[level]
        late = [values[row] for row in self.late[level]]
        for row, value in zip(self.late[level], settle_digests(late), strict=True):
            values[row] = value
        self.late[level] = []
        strings = cast(list[str | None], values)
        rows = self.batched_rows[level]
        if not rows:
            return strings
        index = np.asarray(rows, np.int64)
        every = len(rows) == len(values) and np.array_equal(index, np.arange(len(rows)))
        if self.helper is not None:  # formatted by the helper
            formatted = self.helper.stored_at(self.offsets[level][index], self.sizes[level][index])
        else:
            formatted = stored_ascii(self.algorithm, np.asarray(self.batched[level], np.uint64))
        if every:  # rows 0, 1, 2... in order, each digested here: no scatter
            return ascii_rows_array(formatted, np.ones(len(values), np.bool_))
        ascii = np.zeros((len(values), formatted.shape[1]), np.uint8)
        ascii[index] = formatted
        valid = np.zeros(len(values), np.bool_)
        valid[index] = True
        batched = ascii_rows_array(ascii, valid)
        if not self.strings[level]:
            return batched
        return pc.if_else(pa.array(valid), batched, string_array(strings))

    def drop(self, level: int) -> None:
        """Forget ``level``'s measurements once its Parquet is written."""
        self.offsets[level] = self.sizes[level] = np.empty(0, np.int64)
        if self.digests is not None:
            self.digests[level] = []
            self.late[level] = []
            self.batched_rows[level] = []
            self.batched[level] = []

    def check_complete(self) -> None:
        for level, offsets in enumerate(self.offsets):
            missing = np.flatnonzero(offsets < 0)
            if missing.size:
                raise AssertionError(f"level{level} rows {missing[:5].tolist()} were not written")


class _CountingFile:
    """A buffered output file whose ``tell()`` is the count of bytes written (no system call).

    :class:`ZipWriter` asks ``tell()`` once per member.  On a buffered file that is
    an ``lseek`` which releases the GIL, and with the read-ahead and Parquet
    threads running the writing thread then waited for the GIL once per member
    (40% of the time of a write of 100k ``__meta__`` members).  Every write and
    seek goes through this object, so the count is the position the kernel
    would report.
    """

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw
        self._position = raw.tell()

    def write(self, data: bytes | bytearray | memoryview) -> int:
        written = self._raw.write(data)
        self._position += written
        return written

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        self._position = self._raw.seek(offset, whence)
        return self._position

    def tell(self) -> int:
        return self._position

    def flush(self) -> None:
        self._raw.flush()

    def fileno(self) -> int:
        return self._raw.fileno()


def _write_files(
    writer: ZipWriter, layout: Layout, measured: _Measured, digest: str | None, bar: Any
) -> None:
    """Every FILE sample, depth first, a batch of names and sources at a time; small
    local files are read with the kernel reading ahead
    (:func:`~taco_gdal.write._readahead.read_small_files`), :data:`DIGEST_AHEAD` at a
    time, and with a ``digest`` those read into memory are digested together.  Larger
    files are announced to the writer when the window opens them
    (:meth:`~taco_gdal.write.zipstream.ZipWriter.expect`): a SHA-256 of theirs is
    computed from the source, ahead of the copy."""
    integers, helper = measured.batch, measured.helper
    reads_output = helper is not None and helper.reads_output
    call = None
    on_large = None if digest is None else functools.partial(writer.expect, digest=digest)
    for batch in layout.file_batches():
        sources = batch.sources
        rows = zip(batch.levels, batch.rows, batch.paths, sources, batch.padding, strict=True)
        files = zip(rows, read_small_files(sources, LOCAL_BLOCK, on_large), strict=True)
        while chunk := list(itertools.islice(files, DIGEST_AHEAD)):
            if (  # the first small files of a digest computed here or by the helper
                digest is not None
                and integers is None
                and helper is None
                and call is None
                and any(type(data) is bytes for _, data in chunk)
            ):
                helper = measured.start_helper()
                reads_output = helper is not None and helper.reads_output
                call = value_call(digest) if helper is None else None
            values = _digests(chunk, integers, call)
            for ((level, row, path, source, padding), data), value in zip(
                chunk, values, strict=True
            ):
                name = f"{DATA_DIR}/{path}"
                if source is None:  # zero bytes; padding rows get no digest (null in the column)
                    info = writer.add_bytes(name, b"", None if padding else digest)
                elif type(value) is int:  # digested with the chunk: recorded below
                    info = writer.add_bytes(name, cast(bytes, data))
                elif isinstance(data, bytes) and helper is not None:  # digested off this thread
                    info = writer.add_bytes(name, data)
                    if not reads_output:
                        helper.submit(data, info.data_offset)
                    measured.record_found(level, row, info)
                    bar.update(1)
                    continue
                elif isinstance(data, bytes):
                    info = writer.add_bytes(name, data, digest, digested=cast(str | None, value))
                elif data is not None:
                    raise TacoIOError(
                        f"cannot copy {source!r} into member {name!r}: {data}"
                    ) from data
                else:
                    local = is_local(source)
                    info = writer.add_file(name, source if local else to_vsi(source), digest=digest)
                measured.record_at(level, row, info, value if type(value) is int else None)
                bar.update(1)


SMALL_PEEK: Final = 64
"""FILE samples looked at before a write with a digest: the helper for small members
starts with the write when one of these is small, else at the first small one."""


def _starts_small(layout: Layout, limit: int) -> bool:
    """Whether one of the first :data:`SMALL_PEEK` FILE samples is a local file of at
    most ``limit`` bytes (or one that cannot be looked at: the write reports it).

    Started with the write, the helper process is ready by the first small member
    (started there instead, 10k x 4 KiB took 3.2% longer); a write of large members
    only starts none, so the digest thread, which digests them ahead of their copies
    on the other CPU, does not share that CPU with an idle interpreter's start.
    """
    for batch in layout.file_batches(SMALL_PEEK):
        for source in batch.sources:
            if source is None or not is_local(source):
                continue
            try:
                if os.stat(source).st_size <= limit:
                    return True
            except OSError:
                return True
        return False
    return False


DIGEST_AHEAD: Final = 16
"""Small files read (and held, 4 MiB at most) before their digests are computed together.

Digesting each small file between its CRC-32 and its write cost about twice
what the same digests cost in one loop over the files just read: on 10,000
files of 16 KiB on tmpfs (``bench/bench_write_throughput.py``, 20 blocks, the
same runs), CRC-32C added 12.3% to ``create()`` one file at a time and 4.3%
16 at a time, XXH3 18.9% and 10.5% (64 at a time was no better).  The bytes
are the ones written: each ``bytes`` object is digested, then CRC'd and
written unchanged."""


def _digests(
    files: list[tuple[Any, Prefetched]],
    batch: BatchDigest | None,
    call: Callable[[bytes], str] | None,
) -> Sequence[int | str | None]:
    """The digest of each of ``files`` read into memory (``bytes``), None for the
    others (and for all of them with neither ``batch`` nor ``call``): integers
    from ``batch`` (all in one call when every file was read), else strings from ``call``.

    Example:
        >>> list(_digests([("a", b"123456789"), ("b", None)], batch_digest("crc32c"), None))
        [3808858755, None]
        >>> list(_digests([("a", b"123456789")], None, value_call("sha256")))[0][:15]
        'sha256:15e2b0d3'
    """
    if batch is not None:
        datas = [data for _, data in files]
        if all(type(data) is bytes for data in datas):
            return batch.of(cast(list[bytes], datas))
        return [batch.of([data])[0] if type(data) is bytes else None for data in datas]
    if call is None:
        return [None] * len(files)
    return [call(data) if type(data) is bytes else None for _, data in files]


T = TypeVar("T")
R = TypeVar("R")
_BATCH = 256
_IN_FLIGHT = 4
_NAMES_BATCH = 4096


def _map_in_order(fn: Callable[[T], R], items: Sequence[T], workers: int = 2) -> Iterator[R]:
    """``map(fn, items)`` on a small thread pool, results in order, a bounded batch ahead.

    Parquet serialisation releases the GIL, so a second thread serialises the
    next ``__meta__`` tables while this one appends members.
    """

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
            # sliced here, a batch at a time: 80k table slices held at once took 160 MB
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
    """A path to a temporary file in ``folder`` that has no name there, removed on exit.

    The file is unnamed (``O_TMPFILE``, or unlinked as soon as it is made) and
    reached through ``/proc/self/fd``, so a write killed while a level is spooled
    leaves nothing beside the output (a named ``.taco-level-*`` file stayed
    behind a Dask worker killed at that moment).  Without ``/proc`` a named
    file is used, removed on exit.

    Example:
        >>> with _level_spool(Path(".")) as path:
        ...     _ = Path(path).write_bytes(b"PAR1")
        ...     Path(path).read_bytes(), [p for p in os.listdir(".") if p.startswith(".taco-")]
        (b'PAR1', [])
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
    """The ``METADATA/levelN.parquet`` members; each level goes through a temporary
    file in ``spool_dir``, not an in-memory sink that grows by doubling.
    With ``last_use``, each level is dropped once written, so the largest (the
    last) is compressed without the others beside it, and the columns the
    writer can make again (:func:`~taco_gdal.write._tables.rebuild_columns`)
    are made a row group at a time instead of held whole."""
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
        overwrite: replace an existing ``output`` (otherwise TacoExistsError).
        quiet: no progress bar.
        parquet_kwargs: overrides of the parquet writer settings.
        checksum: ``"crc32c"``, ``"xxh3"`` or ``"sha256"``: store a per-sample digest
            (``taco_gdal:checksum``) computed while copying; None stores none.

    Returns:
        The absolute path written.

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

    ``last_use``: nothing reads ``layout`` (nor the list of tables it shares with
    ``package``) after this write, so each part of it is dropped once written:
    the sources (``path`` columns) after the data members, each level after its
    Parquet.  On a 20k/80k/320k cascade the 320k-row level was compressed beside
    9 MB of source paths and the two smaller levels.
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
        counting = _CountingFile(f)
        writer = ZipWriter(cast(BinaryIO, counting), check_names=False, late_digests=True)
        readable = readable_fd(f)
        if checksum is not None:
            start = functools.partial(start_member_digests, checksum, readable, counting.flush)
            measured.helper_factory = start
            if _starts_small(layout, LOCAL_BLOCK):  # started now, it is ready when they come
                measured.start_helper()
        try:
            writer.add_taco_header()
            _write_files(writer, layout, measured, checksum, bar)
            if measured.helper is not None:  # it digests the last members meanwhile
                measured.helper.members_written()
            if last_use:
                layout.drop_sources()
            release_memory()
            _write_local_meta(writer, layout, measured, meta_options, bar)
            release_memory()
            entries = _write_levels(
                writer, layout, measured, level_options, target.parent, last_use
            )
            info = writer.add_bytes(COLLECTION_FILE, collection_json_bytes(package.collection))
            entries.append(HeaderEntry(info.data_offset, info.size))
            writer.set_header_entries(entries)
            writer.close()
        finally:
            if measured.helper is not None:  # its digests are in the levels written
                measured.helper.abort()
    return target
