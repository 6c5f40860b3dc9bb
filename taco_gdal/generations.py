"""Converting TACO v1 and TACO 3 datasets to TACO 2, by byte copy, with a report.

Payloads are copied through :func:`taco_gdal.export`, never decoded; what TACO 2
cannot express is reported and logged. TACO 2 -> TACO 3 is refused: the TACO 3
specification reserves writing to taco-eo (see ``docs/compatibility.md``).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from taco_gdal.errors import TacoValidationError

__all__ = ["ConversionReport", "convert", "convert_command"]

log = logging.getLogger(__name__)

V1_FORMATS: Final = frozenset({"taco_v1"})
V3_FORMATS: Final = frozenset({"taco3", "taco3cat"})


@dataclass(frozen=True)
class ConversionReport:
    """What :func:`convert` did: where from, where to, what was copied, what could not be carried.

    Attributes:
        source: the input as given.
        output: the TACO 2 dataset written.
        source_format: the container format the input was read as (``taco_v1``, ``taco3``...).
        samples: rows written, per level (level 0 first).
        files: FILE samples copied (each byte-identical to its source range).
        bytes: payload bytes copied.
        not_carried: what TACO 2 cannot express, one sentence each.

    Example:
        >>> ConversionReport("a.taco", Path("a.tacozip"), "taco_v1", [3], 3, 1290).ok
        True
    """

    source: str
    output: Path
    source_format: str
    samples: list[int]
    files: int
    bytes: int
    not_carried: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when everything was carried."""
        return not self.not_carried


def _losses(source_format: str, collection: dict[str, Any], levels: list[Any]) -> list[str]:
    lost: list[str] = []
    if source_format in V1_FORMATS:
        lost.append(
            "tortilla:offset values are byte offsets into the v1 file; they are kept as "
            "metadata but no longer locate the bytes (internal:offset does)"
        )
        lost.append(
            "stac:centroid (WKT in v1) is written as a WKB point and stac:time_start/"
            "stac:time_end (epoch seconds in v1) as UTC timestamps, the TACO 2 types"
        )
        if any(t.num_rows and "FOLDER" in t.column("type").to_pylist() for t in levels[:-1]):
            lost.append(
                "embedded tortillas (TORTILLA samples) become FOLDER samples with __meta__; "
                "their v1 bytes (header and footer) are not copied"
            )
    if source_format in V3_FORMATS:
        lost.append(
            "the CoZIP index and FNV-1a-64 check are replaced by a TACO_HEADER; TACO 2 readers "
            "ignore taco:structure and taco:metadata (kept in COLLECTION.json)"
        )
        lost.append("stac:centroid (struct<lon, lat> float32 in TACO 3) is written as a WKB point")
        variables = [c for t in levels[:1] for c in t.column_names if "*[" in c]
        if variables:
            lost.append(
                f"variable leaves {variables}: samples have different numbers of children, "
                "which TACO 2's PIT rule forbids; written without __TACOPAD__ padding, so "
                "strict TACO 2 readers may refuse the file (the member lists are kept)"
            )
        if source_format == "taco3cat":
            lost.append(
                "the partitions of the TACO 3 TACOCAT are merged into one output "
                f"({len((collection.get('taco:sources') or {}).get('partitions', []))} "
                "partitions); taco:sources is kept in COLLECTION.json"
            )
    return lost


def convert(
    source: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    quiet: bool = False,
) -> ConversionReport:
    """Write a TACO v1 or TACO 3 dataset as TACO 2, copying every payload byte for byte.

    Args:
        source: anything :func:`taco_gdal.load` opens.
        output: ``*.tacozip`` / ``*.zip`` for a ZIP, anything else for a FOLDER.

    Raises:
        TacoExistsError: ``output`` exists and ``overwrite`` is False.
        TacoFormatError, TacoIOError: the source cannot be read.

    Example:
        >>> report = convert("old.taco", "old.tacozip")  # a TACO v1 file
        >>> report.source_format, report.samples, report.files
        ('taco_v1', [3], 3)
        >>> report.not_carried[0]
        'tortilla:offset values are byte offsets into the v1 file; ...'
    """
    from taco_gdal.format.names import FILE, SIZE, TYPE
    from taco_gdal.read.load import load
    from taco_gdal.write.export import export

    given = os.fspath(source)
    dataset = load(given)
    try:
        levels = [dataset.to_arrow(k) for k in range(dataset.max_depth + 1)]
        written = export(dataset, output, overwrite=overwrite, quiet=quiet)
        files, payload = 0, 0
        for table in levels:
            kinds = table.column(TYPE).to_pylist()
            sizes = table.column(SIZE).to_pylist() if SIZE in table.column_names else []
            for position, kind in enumerate(kinds):
                if kind == FILE:
                    files += 1
                    payload += int(sizes[position] or 0) if sizes else 0
        lost = _losses(dataset.format, dataset.collection, levels)
        report = ConversionReport(
            given,
            Path(written),
            dataset.format,
            [t.num_rows for t in levels],
            files,
            payload,
            lost,
        )
    finally:
        dataset.close()
    for item in lost:
        log.warning("%s -> %s: not carried: %s", given, written, item)
    return report


def convert_command(
    source: str,
    output: str,
    dataset_id: str | None = None,
    overwrite: bool = False,
    quiet: bool = False,
) -> Path:
    """``taco convert`` for v1 and TACO 3 sources; ``dataset_id`` raises TacoValidationError.

    Example:
        >>> convert_command("old.taco", "old.tacozip")
        PosixPath('.../old.tacozip')
    """
    if dataset_id is not None:
        raise TacoValidationError(
            f"{source}: --id is for formats without an id; expected none, found {dataset_id!r} "
            "(v1 and TACO 3 datasets keep their own id)"
        )
    return convert(source, output, overwrite=overwrite, quiet=quiet).output
