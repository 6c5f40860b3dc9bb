"""The bytes of some of a level's columns, read into memory for a decode that holds no GIL.

Decoding through a Python file over the level's byte range makes every read of
Arrow's a call into Python, which waits for the GIL held by the imports ``load``
runs beside it.  :func:`read_columns` instead reads the wanted column chunks and
the footer into one buffer as long as the level, at their own offsets, so Parquet
decodes it in C++.  The buffer comes from the system allocator: pages never
written are never resident, and all of it goes back when it is freed.
"""

from __future__ import annotations

from collections.abc import Collection

import pyarrow as pa
import pyarrow.parquet as pq

from taco_gdal.io.vsi import VSIFile

__all__ = ["CHUNK_SLACK", "MERGE_GAP", "chunk_ranges", "read_columns"]

CHUNK_SLACK = 100
"""Bytes read past a column chunk's stated end, as Arrow does (PARQUET-816)."""
MERGE_GAP = 64 * 1024
"""Ranges closer than this are read as one (a read costs more than a small gap)."""
_FOOTER_TAIL = 8
"""The footer's length (4 bytes, little-endian) and the ``PAR1`` magic end the file."""


def chunk_ranges(
    metadata: pq.FileMetaData, names: Collection[str], length: int
) -> list[tuple[int, int]]:
    """Byte ranges ``(start, end)`` of the column chunks of ``names`` and the footer, merged
    when closer than :data:`MERGE_GAP`."""
    top = set(names)
    ranges: list[tuple[int, int]] = []
    for g in range(metadata.num_row_groups):
        group = metadata.row_group(g)
        for c in range(group.num_columns):
            chunk = group.column(c)
            if chunk.path_in_schema.split(".", 1)[0] not in top:
                continue
            start = chunk.data_page_offset
            dictionary = chunk.dictionary_page_offset
            if chunk.has_dictionary_page and dictionary and 0 < dictionary < start:
                start = dictionary
            end = start + chunk.total_compressed_size + CHUNK_SLACK
            ranges.append((max(start, 0), min(end, length)))
    footer = _FOOTER_TAIL + metadata.serialized_size
    ranges.append((max(length - footer, 0), length))
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start - merged[-1][1] < MERGE_GAP:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def read_columns(
    file: VSIFile,
    offset: int,
    length: int,
    metadata: pq.FileMetaData,
    names: Collection[str],
    where: str,
) -> pa.Buffer:
    """The Parquet file in ``[offset, offset + length)`` of ``file``, with only ``names`` read."""
    buffer = pa.allocate_buffer(length, memory_pool=pa.system_memory_pool())
    view = memoryview(buffer)
    try:
        for start, end in chunk_ranges(metadata, names, length):
            file.read_into(offset + start, view[start:end], f"{where}: column chunks")
    finally:
        view.release()
    return buffer
