"""Reading a CoZIP archive's priority files through GDAL: the index, the check, one tail read.

Requests: the first 256 bytes come from the shared :class:`Probe` (detection
already read them); an index longer than that costs one more read; then one
range read from the first priority file's local header (or the start of the
32 KiB hash window, whichever is earlier) to the end of the archive returns
every priority file, their local headers (checked against the index) *and*
the bytes the integrity hash covers.  The TACO profile
puts all priority files in one contiguous block before the central
directory, so for TACO archives that single read is all the metadata.
"""

from __future__ import annotations

from dataclasses import dataclass

from taco_cozip.layout import (
    INDEX_OFFSET,
    MAX_EXTRA,
    PROFILE_TACO,
    CozipFormatError,
    CozipIndex,
    check_entries,
    hash_ranges,
    parse_header,
    parse_index,
    verify_hash,
)
from taco_gdal.containers import Probe, VSIFile

__all__ = ["PriorityFiles", "read_priority_files"]


@dataclass(frozen=True)
class PriorityFiles:
    """The parsed index and the bytes of every priority file, by name.

    Example:
        >>> PriorityFiles("/d/x.zip", CozipIndex(1, 2, ()), {}).get("COLLECTION.json")
    """

    path: str
    index: CozipIndex
    files: dict[str, bytes]

    def get(self, name: str) -> bytes | None:
        """The payload of priority file ``name`` (``None`` when the index lacks it)."""
        return self.files.get(name)

    def require(self, name: str) -> bytes:
        """The payload of ``name``.

        Raises:
            CozipFormatError: the index does not list it.
        """
        data = self.files.get(name)
        if data is None:
            raise CozipFormatError(
                f"{self.path}: expected priority file {name!r} in the CoZIP index, found "
                f"{sorted(self.files)}"
            )
        return data


def read_priority_files(probe: Probe, verify: bool = True) -> PriorityFiles:
    """Parse the index of the CoZIP at ``probe``, check its hash, return its priority files.

    Raises:
        CozipFormatError: the header, the index or the hash is wrong, or an
            entry reaches past the end of the archive.
        TacoIOError: the archive cannot be read.
    """
    where = probe.given
    head = probe.head()
    header = parse_header(head[:INDEX_OFFSET], where)
    with VSIFile(probe.path) as f:
        size = f.size()
        if header.index_end > len(head):
            head = f.read_exact(0, header.index_end, "CoZIP index")
        payload = head[INDEX_OFFSET : header.index_end]
        index = parse_index(payload, where)
        ranges = hash_ranges(header, size, where)
        for entry in index.entries:
            if entry.end > size:
                raise CozipFormatError(
                    f"{where}: index entry {entry.name!r} covers bytes {entry.offset}.."
                    f"{entry.end}, past the archive's {size} bytes (INVALID_OFFSET)"
                )
        # each payload's local header too (30 bytes, the name, an extra field)
        starts = [e.offset - 30 - len(e.name.encode()) - MAX_EXTRA for e in index.entries]
        starts.append(ranges[-1][0])
        start = max(min(starts), header.index_end)
        tail = f.read_exact(start, size - start, "CoZIP priority files and hash window")
    if verify:
        # when the index and the hash window overlap, each byte is hashed once
        parts = [payload, tail] if len(ranges) == 1 else [payload, tail[ranges[1][0] - start :]]
        verify_hash(header, parts, where)
    check_entries(tail, start, index.entries, index.profile == PROFILE_TACO, where)
    files = {}
    for entry in index.entries:
        if entry.offset < start:
            raise CozipFormatError(
                f"{where}: index entry {entry.name!r} starts at byte {entry.offset}, inside the "
                f"index (which ends at byte {header.index_end}) (INVALID_OFFSET)"
            )
        files[entry.name] = tail[entry.offset - start : entry.end - start]
    return PriorityFiles(probe.path, index, files)
