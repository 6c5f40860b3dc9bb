"""Parse an HTTP ``Range`` header (RFC 9110 section 14) against a representation size."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ByteRange:
    """Inclusive ``first``..``last`` byte positions."""

    first: int
    last: int

    @property
    def length(self) -> int:
        return self.last - self.first + 1


class Unsatisfiable(Exception):
    """The range is well formed but selects no byte of the representation (answer 416)."""


def parse_range(header: str | None, size: int) -> ByteRange | None:
    """The single byte range ``header`` selects, or ``None`` to send the whole body.

    ``None`` also covers what a server may ignore: a missing or malformed header
    and multi-range requests (the server then answers 200 with everything).

    Raises:
        Unsatisfiable: ``bytes=first-`` with ``first >= size``, or ``bytes=-0``.
    """
    if not header or not header.startswith("bytes="):
        return None
    spec = header[len("bytes=") :].strip()
    if "," in spec:
        return None
    first_text, dash, last_text = spec.partition("-")
    if not dash:
        return None
    if not first_text:  # suffix range: the last N bytes
        if not last_text.isdigit():
            return None
        suffix = int(last_text)
        if suffix == 0 or size == 0:
            raise Unsatisfiable(spec)
        return ByteRange(max(0, size - suffix), size - 1)
    if not first_text.isdigit() or (last_text and not last_text.isdigit()):
        return None
    first = int(first_text)
    last = int(last_text) if last_text else size - 1
    if last_text and last < first:
        return None  # invalid: ignore the header
    if first >= size:
        raise Unsatisfiable(spec)
    return ByteRange(first, min(last, size - 1))
