"""STAC Items of a dataset's current view written to files: JSON, NDJSON, stac-geoparquet.

The Items come from :func:`taco_gdal.read.interop.stac.item_batches` a batch at a
time and go to a staging folder beside the output, so that memory stays bounded
and the output appears complete or not at all.
"""

from __future__ import annotations

import itertools
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pyarrow as pa

from taco_gdal.errors import TacoDependencyError, TacoValidationError
from taco_gdal.extensions.stac_fields import INSTALL_HINT
from taco_gdal.read.interop.stac import BATCH, Href, item_batches, stac_collection

if TYPE_CHECKING:
    from taco_gdal.read.query.state import QueryState

__all__ = ["write_stac"]

_SUFFIXES: Final = (".json", ".ndjson", ".parquet")


def write_stac(
    state: QueryState,
    path: str | os.PathLike[str],
    level: int = 0,
    href: Href = "gdal",
    batch: int = BATCH,
    kind: str | None = None,
) -> tuple[Path, int]:
    """Write the current view's Items to ``path`` (``.json``, ``.ndjson`` or ``.parquet``).

    ``kind`` (one of those suffixes) overrides what the path's suffix says.

    ``.json`` is an ItemCollection, ``.ndjson`` one Item per line, ``.parquet``
    stac-geoparquet written by the ``stac-geoparquet`` library in batches (its
    schema unified over every batch) with the Collection in the file metadata.
    The file appears complete or not at all.  Returns the path and the Item count.

    Raises:
        TacoValidationError: another suffix, or a sample without time.
        TacoDependencyError: the ``stac`` extra is missing.

    Example:
        >>> write_stac(tiles.state, "bands.ndjson", level=1)
        (PosixPath('bands.ndjson'), 9)
    """
    out = Path(path)
    suffix = kind or out.suffix.lower()
    if suffix not in _SUFFIXES:
        raise TacoValidationError(
            f"to_stac: expected an output ending in {' / '.join(_SUFFIXES)}, found {str(out)!r}"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".taco-stac-", dir=out.parent) as work:
        if suffix == ".parquet":
            staged, count = _write_geoparquet(state, Path(work), level, href, batch)
        else:
            staged, count = _write_json(state, Path(work), level, href, suffix == ".json", batch)
        os.replace(staged, out)
    return out, count


def _write_json(
    state: QueryState, work: Path, level: int, href: Href, collection: bool, batch: int
) -> tuple[Path, int]:
    """NDJSON, or an ItemCollection when ``collection``; orjson (stac-geoparquet's) when present."""
    try:
        import orjson

        def dumps(item: dict[str, Any]) -> bytes:
            return bytes(orjson.dumps(item))
    except ImportError:  # pragma: no cover - orjson comes with the stac extra

        def dumps(item: dict[str, Any]) -> bytes:
            return json.dumps(item, separators=(",", ":")).encode()

    staged, count = work / "items.json", 0
    with staged.open("wb") as f:
        f.write(b'{"type":"FeatureCollection","features":[\n' if collection else b"")
        for items in item_batches(state, level, href, batch):
            for item in items:
                f.write(b",\n" if collection and count else b"")
                f.write(dumps(item) if collection else dumps(item) + b"\n")
                count += 1
        f.write(b"\n]}\n" if collection else b"")
    return staged, count


def _write_geoparquet(
    state: QueryState, work: Path, level: int, href: Href, batch: int
) -> tuple[Path, int]:
    """stac-geoparquet through the library: each batch of Items to Arrow, its schema unified.

    The dicts go to Arrow in one ``pa.array`` call per batch and through
    stac-geoparquet's own batch conversion (``StacJsonBatch.to_arrow_batch``, of
    the pinned 0.8.3: properties to columns, times, bbox struct, GeoArrow
    metadata), private in the pinned release; its public ``from_dicts`` path
    deep-copies every Item first and takes several times as long.  Batches are
    spooled to Parquet, then read back under the unified schema and written by
    ``stac_geoparquet.arrow.to_parquet`` with the Collection in the metadata.
    """
    try:
        from stac_geoparquet.arrow import to_parquet
    except ImportError as exc:
        raise TacoDependencyError(
            f"to_stac_geoparquet() needs stac-geoparquet: expected an importable "
            f"'stac_geoparquet' module, found none ({exc}); install it with: {INSTALL_HINT}"
        ) from exc
    try:
        from stac_geoparquet.arrow._batch import StacJsonBatch
    except ImportError:  # another release moved it: the public path
        return _write_geoparquet_public(state, work, level, href, batch)
    import pyarrow.dataset as pads
    import pyarrow.parquet as pq

    parts, schemas, count = [], [], 0
    for number, items in enumerate(item_batches(state, level, href, batch, wkb=True)):
        raw = pa.RecordBatch.from_struct_array(pa.array(items))
        clean = StacJsonBatch(raw).to_arrow_batch().inner
        parts.append(work / f"part{number:06d}.parquet")
        pq.write_table(pa.Table.from_batches([clean]), parts[-1])
        schemas.append(clean.schema)
        count += len(items)
    if not count:
        raise TacoValidationError(
            f"to_stac_geoparquet: the current view of {state.path} has no samples; "
            "stac-geoparquet needs at least one Item"
        )
    schema = pa.unify_schemas(schemas, promote_options="permissive")
    parts_set = pads.dataset(parts, schema=schema, format="parquet")
    reader = parts_set.scanner(
        batch_readahead=1, fragment_readahead=1, use_threads=False
    ).to_reader()
    collection = stac_collection(state)
    staged = work / "items.parquet"
    to_parquet(reader, staged, collections={collection.id: collection.to_dict()})
    return staged, count


def _write_geoparquet_public(
    state: QueryState, work: Path, level: int, href: Href, batch: int
) -> tuple[Path, int]:
    """stac-geoparquet through the library's public writer, chunks spooled to disk
    (slower: it copies every Item); used when its batch class has moved.

    ``parse_stac_items_to_parquet`` with ``schema="ChunksToDisk"`` turns each
    chunk of Items into Arrow, spools it as Parquet, unifies the chunks' schemas
    and writes the file with the Collection in its metadata, so memory follows
    the chunk, not the Item count.
    """
    from stac_geoparquet.arrow import parse_stac_items_to_parquet

    count = 0

    def items() -> Iterator[dict[str, Any]]:
        nonlocal count
        for part in item_batches(state, level, href, batch):
            count += len(part)
            yield from part

    stream = items()
    first = next(stream, None)
    if first is None:
        raise TacoValidationError(
            f"to_stac_geoparquet: the current view of {state.path} has no samples; "
            "stac-geoparquet needs at least one Item"
        )
    collection = stac_collection(state)
    staged, chunks = work / "items.parquet", work / "chunks"
    chunks.mkdir()
    parse_stac_items_to_parquet(
        itertools.chain([first], stream), output_path=staged, chunk_size=batch,
        schema="ChunksToDisk", tmpdir=chunks, collections={collection.id: collection.to_dict()},
    )  # fmt: skip
    return staged, count
