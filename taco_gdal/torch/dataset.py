"""SampleDataset: a map-style PyTorch dataset over the samples of a TACO dataset."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import torch
from torch.utils.data import Dataset

from taco_gdal.env import config_options, thread_options
from taco_gdal.errors import TacoQueryError
from taco_gdal.format.names import CHECKSUM, FOLDER, GDAL_VSI, ID, INTERNAL_PREFIX, SIZE, TYPE
from taco_gdal.io import pinning
from taco_gdal.torch.reading import Reader, SampleReader
from taco_gdal.torch.rows import SampleRows, resolve_rows

if TYPE_CHECKING:
    from taco_gdal.read.dataset import TacoDataset
    from taco_gdal.read.frames.dataframe import TacoDataFrame

__all__ = ["CHILDREN", "IMAGE", "MAX_READ_THREADS", "READ_BYTES_IN_FLIGHT", "SampleDataset"]

IMAGE = "image"
"""Key of a FILE sample's value: a bands-first tensor, or what the user reader returned."""
CHILDREN = "children"
"""Key of a FOLDER sample's children: ``{child id: child sample dict}``."""

Transform = Callable[[dict[str, Any]], Any]

MAX_READ_THREADS = 4
"""Threads per process that read a batch's samples by default (the built-in reader)."""
READ_BYTES_IN_FLIGHT = 8 * 1024 * 1024
"""Bytes the default read threads of one process fetch at once, at most.

A sample's bytes wait in GDAL's ``/vsicurl/`` block cache (16 MB by default)
between their GET and the open that reads them; more in flight than the cache
holds would evict a sample before it is opened and cost a second GET.
"""


def _collect_pins(rows: SampleRows) -> dict[str, pinning.Pin]:
    """The pin of every remote container the rows read from (recorded at load: no request)."""
    containers = {
        pinning.container_of(str(path))
        for level in rows.levels
        for path in level.table.column(GDAL_VSI).unique().to_pylist()
        if path is not None
    }
    found: dict[str, pinning.Pin] = {}
    for container in sorted(containers):
        pin = pinning.pins.get(container) or pinning.verify(container)
        if pin is not None:
            found[container] = pin
    return found


def _default_read_threads(rows: SampleRows, user_reader: bool) -> int:
    """Read threads when the user gives none: 1 for a user reader (maybe not thread-safe),
    else as many as keep :data:`READ_BYTES_IN_FLIGHT` bytes in flight (1..MAX_READ_THREADS)."""
    if user_reader:
        return 1
    sizes = [
        pc.max(level.table.column(SIZE)).as_py()
        for level in rows.levels
        if SIZE in level.table.column_names and level.table.num_rows
    ]
    largest = max((int(s) for s in sizes if s is not None), default=0)
    if largest <= 0:  # no level states sizes
        return MAX_READ_THREADS
    return max(1, min(MAX_READ_THREADS, READ_BYTES_IN_FLIGHT // largest))


_COMPUTABLE: dict[np.dtype[Any], type[np.generic]] = {
    np.dtype(np.uint16): np.int32,
    np.dtype(np.uint32): np.int64,
}
"""Unsigned pixel types torch stores but cannot compute with (no ``mean``, no ``+``),
and the signed type that holds every value of each."""


def _as_tensor(value: Any, dtype: torch.dtype | None) -> Any:
    """A numpy array as a tensor torch computes with (``dtype``: cast to that instead)."""
    if not isinstance(value, np.ndarray):
        return value
    if dtype is not None:
        return torch.from_numpy(value).to(dtype)
    wider = _COMPUTABLE.get(value.dtype)
    return torch.from_numpy(value if wider is None else value.astype(wider))


def _null_fill(kind: pa.DataType) -> Any:
    """What an item holds for a null of an Arrow type, so ``default_collate`` batches it
    (nested types: None; batch those with ``collate_samples``)."""
    types = pa.types
    numeric = (types.is_integer, types.is_floating, types.is_boolean, types.is_decimal)
    if any(test(kind) for test in numeric):
        return float("nan")
    if types.is_string(kind) or types.is_large_string(kind) or types.is_temporal(kind):
        return ""
    if types.is_binary(kind) or types.is_large_binary(kind) or types.is_fixed_size_binary(kind):
        return b""
    return None


class SampleDataset(Dataset[Any]):
    """A map-style dataset over the samples of a TACO dataset, a filtered view or a frame.

    The rows are resolved once, in the building process, into Arrow tables of paths
    and metadata: the dataset pickles small and DataLoader workers never open the
    container or run SQL.  Each remote sample of up to 8 MB costs one GET.

    An item is a dict, as TorchGeo's datasets return:

    * ``image``: for a FILE sample, a ``torch.Tensor`` (bands, rows, cols) as
      rasterio's ``read()`` returns it (:func:`taco_gdal.io.sample.read_sample`),
      ``uint16``/``uint32`` widened to ``int32``/``int64`` (torch has no arithmetic
      on them); with ``read=``, the reader's value (a dict is merged into the item);
    * ``children``: for a FOLDER sample, ``{child id: child item}``, recursively;
    * ``id`` and the other metadata columns (not ``internal:*``) as values
      ``default_collate`` batches: times as ISO 8601 text, geometry as WKB; a null
      is NaN (numbers, booleans), ``""`` (text, times) or ``b""`` (binary), and
      ``None`` in a list or struct column (use ``collate_fn=collate_samples``).

    Args:
        source: a :class:`~taco_gdal.TacoDataset` (filtered or not) or a
            :class:`~taco_gdal.TacoDataFrame`.
        level: the hierarchy level whose samples are the items (a dataset only).
        read: a reader ``(gdal_path, row) -> value`` for non-raster samples;
            ``row`` holds every column of the sample's row as plain values.
        transform: applied to every item dict (e.g. augmentation).
        verify: check each sample's bytes against its ``taco_gdal:checksum``
            (one GET still: the bytes are read once and opened from memory).
        columns: the metadata columns to put in the items (default: all but
            ``internal:*``); ``id`` is always there.
        gdal_options: GDAL options around every read, in every worker, pickled with the
            dataset (e.g. S3 keys: a spawned worker has not the parent's ``Env``).
        dtype: the ``torch.dtype`` of every image tensor (default: as above).
        read_threads: threads that read the samples of one ``__getitems__`` call (a
            DataLoader batch) at once, in every process.  Default: up to
            :data:`MAX_READ_THREADS` with the built-in reader (see
            :data:`READ_BYTES_IN_FLIGHT`), ``1`` with a user ``read=`` (which must be
            thread-safe to be given more).  Pool threads read under the calling
            thread's GDAL options (``gdal_options`` and its open ``Env`` blocks); the
            first read of each container in a process is made alone.  The pool is per
            process; GDAL keeps HTTP connections per thread, so none is shared.

    Raises:
        TacoQueryError: a needed column is missing, ``verify=True`` without a
            ``taco_gdal:checksum`` column, an unknown column in ``columns``,
            or ``read_threads`` below 1.

    Example:
        >>> from torch.utils.data import DataLoader
        >>> ds = taco_gdal.load(url).filter_bbox(-4, 40, -3, 41)  # url: a server on 127.0.0.1
        >>> def normalise(item):
        ...     item["image"] = item["image"] / 255.0
        ...     return item
        >>> train = SampleDataset(ds, transform=normalise, verify=True)
        >>> loader = DataLoader(train, batch_size=2)  # add num_workers=4 in a script
        >>> batch = next(iter(loader)); batch["image"].shape
        torch.Size([2, 1, 16, 16])
    """

    def __init__(
        self,
        source: TacoDataset | TacoDataFrame | SampleRows,
        *,
        level: int = 0,
        read: Reader | None = None,
        transform: Transform | None = None,
        verify: bool = False,
        columns: Sequence[str] | None = None,
        gdal_options: Mapping[str, object] | None = None,
        read_threads: int | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        self.rows = source if isinstance(source, SampleRows) else resolve_rows(source, level)
        self.transform = transform
        if dtype is not None and not isinstance(dtype, torch.dtype):
            raise TacoQueryError(
                f"{self.rows.where}: dtype expected a torch.dtype such as torch.float32, "
                f"found {dtype!r}"
            )
        self.dtype = dtype
        self.fills = [
            {f.name: _null_fill(f.type) for f in level.table.schema} for level in self.rows.levels
        ]
        self.columns = None if columns is None else tuple(columns)
        if self.columns is not None:
            unknown = [c for c in self.columns if c not in self.rows.levels[0].table.column_names]
            if unknown:
                self.rows.column(unknown[0])  # raises, listing the columns
        if verify and CHECKSUM not in self.rows.levels[0].table.column_names:
            raise TacoQueryError(
                f"{self.rows.where}: verify=True expected a {CHECKSUM!r} column at level "
                f"{self.rows.level}, found none (write the dataset with create(..., checksum=...))"
            )
        if read_threads is None:
            read_threads = _default_read_threads(self.rows, read is not None)
        if isinstance(read_threads, bool) or not isinstance(read_threads, int) or read_threads < 1:
            raise TacoQueryError(
                f"{self.rows.where}: read_threads expected an integer >= 1, found {read_threads!r}"
            )
        self.read_threads = read_threads
        options = {k: str(v) for k, v in (gdal_options or {}).items()}
        self.reader = SampleReader(read, verify, options, _collect_pins(self.rows))
        self._ready_pid: int | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._opened: set[str | None] = set()

    # --- pickling: plain values only, the per-process state is rebuilt -----------
    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_ready_pid"] = None
        state["_pool"] = None  # threads belong to the process that started them
        state["_opened"] = set()  # containers read in this process
        return state

    # --- map-style protocol -------------------------------------------------------
    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: int) -> Any:
        """The item at ``index`` (a dict; see the class docstring)."""
        return self.__getitems__([index])[0]

    def __getitems__(self, indices: Sequence[int]) -> list[Any]:
        """The items at ``indices``: one metadata lookup for the batch, then one read each."""
        self._prepare()
        positions = [self._position(i) for i in indices]
        rows = self.rows.levels[0].rows(positions)
        if self._pool is not None and len(positions) > 1:
            items = self._read_in_pool(self._pool, positions, rows)
        else:
            items = [self._item(0, p, row) for p, row in zip(positions, rows, strict=True)]
        if self.transform is not None:
            return [self.transform(item) for item in items]
        return items

    def subset(self, indices: Sequence[int] | np.ndarray) -> SampleDataset:
        """A dataset of the items at ``indices`` (cheap: no container read, no SQL).

        Example:
            >>> dataset = SampleDataset(taco_gdal.load("dataset.tacozip"))
            >>> train = dataset.subset([0, 2])
            >>> len(train), train[1]["id"]
            (2, 's002')
        """
        clone = object.__new__(SampleDataset)
        clone.__dict__.update(self.__getstate__())
        clone.rows = self.rows.subset(indices)
        return clone

    # --- internals ------------------------------------------------------------------
    def _prepare(self) -> None:
        pid = os.getpid()
        if self._ready_pid != pid:  # first read in this process (a fresh worker)
            self.reader.prepare_process()
            # a forked child inherits the parent's pool object but none of its threads
            self._pool = None
            if self.read_threads > 1:
                self._pool = ThreadPoolExecutor(self.read_threads, "taco_gdal_read")
            self._opened = set()
            self._ready_pid = pid

    def _read_in_pool(
        self, pool: ThreadPoolExecutor, positions: list[int], rows: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """Items read by the pool under this thread's ``Env`` options, in order; a container's
        first row is read here alone, so its size and pin checks cost one request per process."""
        items: dict[int, dict[str, Any]] = {}
        for k, row in enumerate(rows):
            path = row.get(GDAL_VSI)
            key = None if path is None else pinning.container_of(str(path))
            if key not in self._opened:
                items[k] = self._item(0, positions[k], row)
                self._opened.add(key)
        options = thread_options()
        rest = [k for k in range(len(rows)) if k not in items]

        def read(k: int) -> dict[str, Any]:
            with config_options(options):
                return self._item(0, positions[k], rows[k])

        items.update(zip(rest, pool.map(read, rest), strict=True))
        return [items[k] for k in range(len(rows))]

    def _position(self, index: int) -> int:
        count = len(self)
        if isinstance(index, bool) or not -count <= int(index) < count:
            raise IndexError(
                f"{self.rows.where}: index must be in 0..{count - 1} (or negative), got {index!r}"
            )
        return int(index) % count

    def _keep(self, depth: int, row: dict[str, Any]) -> dict[str, Any]:
        names = self.columns or [c for c in row if not c.startswith(INTERNAL_PREFIX)]
        fills = self.fills[depth]
        kept = {c: fills.get(c) if row[c] is None else row[c] for c in names if c in row}
        kept[ID] = row[ID]
        return kept

    def _item(self, depth: int, position: int, row: dict[str, Any]) -> dict[str, Any]:
        item = self._keep(depth, row)
        if row[TYPE] == FOLDER:
            level = self.rows.levels[depth]
            children = [int(j) for j in level.children(position)]
            child_rows = self.rows.levels[depth + 1].rows(children)
            item[CHILDREN] = {
                str(child[ID]): self._item(depth + 1, j, child)
                for j, child in zip(children, child_rows, strict=True)
            }
            return item
        value = self.reader.read(row)
        if self.reader.reader is not None and isinstance(value, dict):
            item.update(value)
        else:
            item[IMAGE] = _as_tensor(value, self.dtype)
        return item

    def __repr__(self) -> str:
        return (
            f"SampleDataset({len(self)} samples at level {self.rows.level} of "
            f"{self.rows.where}, {len(self.rows.levels) - 1} child level(s))"
        )
