"""``verify(path, level)``: is every byte of a dataset where and what its metadata says?"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Sequence
from typing import Literal, get_args

import pyarrow as pa

from taco_gdal.errors import TacoError, TacoIOError, TacoValidationError
from taco_gdal.format import vsi
from taco_gdal.read.opening.containers import registry
from taco_gdal.read.opening.containers._paths import escape_reason
from taco_gdal.read.opening.containers.base import Container, Probe
from taco_gdal.read.opening.containers.zip import ZipContainer
from taco_gdal.verify import codes
from taco_gdal.verify._folder import verify_folder
from taco_gdal.verify._generic import verify_ranges
from taco_gdal.verify._rows import Collector, Row, iter_rows
from taco_gdal.verify._zip import verify_zip
from taco_gdal.verify.report import Failure, Report

__all__ = ["Level", "verify"]

Level = Literal["structure", "crc", "full"]
LEVELS: tuple[str, ...] = get_args(Level)


def locate(path: str | os.PathLike[str]) -> tuple[str, Probe, type[Container]]:
    """``path`` as given, its probe and its container class (TacoIOError if it is not there)."""
    given = os.fspath(path)
    probe = Probe(vsi.to_vsi(given), given)
    if not probe.stat()[0]:
        raise TacoIOError(f"{given}: does not exist or cannot be reached ({probe.path})")
    return given, probe, registry.detect(probe)


def try_open(container_class: type[Container], probe: Probe, out: Collector) -> Container | None:
    """``container_class.open(probe)``, or None with the failure recorded in ``out``."""
    try:
        return container_class.open(probe)
    except TacoError as exc:
        out.add(codes.UNREADABLE, f"the dataset's metadata cannot be read: {exc}")
        return None


def _zip_levels(path: str, out: Collector) -> list[pa.Table] | None:
    opened = try_open(ZipContainer, Probe(path, path), out)
    return None if opened is None else list(opened.levels)


def _verify_tacocat(opened: Container, level: str, out: Collector, counts: dict[str, int]) -> None:
    by_source: dict[str, list[Row]] = defaultdict(list)
    for row in iter_rows(opened.levels):
        if row.source_file is None:
            out.add(codes.MISSING_MEMBER, "internal:source_file is null", row=row)
            continue
        reason = escape_reason(row.source_file)
        if reason is not None:
            out.add(
                codes.PATH_ESCAPE,
                f"internal:source_file leaves the dataset ({reason})",
                member=row.source_file[:200],
                row=row,
            )
            continue
        by_source[row.source_file].append(row)
    counts["rows"] = sum(len(rows) for rows in by_source.values())
    for name, rows in sorted(by_source.items()):
        source = vsi.join(opened.vsi_rule.root, name)
        sub = Collector()
        verify_zip(source, level, sub, _zip_levels(source, sub), counts, rows)
        _copy(sub.failures, out, name)


def _copy(failures: Sequence[Failure], out: Collector, part: str | None = None) -> None:
    """Re-add ``failures`` (of TACOCAT ``part`` when given) as errors of ``out``."""
    for failure in failures:
        member = failure.member
        if part is not None and member is not None:
            member = f"{part}!{member}"
        message = failure.message if part is None else f"{part}: {failure.message}"
        out.add(
            failure.code,
            message,
            member=member,
            row=failure.row_id,
            expected=failure.expected,
            found=failure.found,
        )


def verify(path: str | os.PathLike[str], level: Level = "crc", *, repair: bool = False) -> Report:
    """Check that every byte of a dataset is where and what its metadata says.

    Levels, each including the previous one:

    * ``structure``: TACO_HEADER, central directory and every row's offset and
      size agree, every ``__meta__`` equals its rows; FOLDER: every file exists;
      TACOCAT: every source ZIP, and the TACOCAT rows against it.
    * ``crc``: the CRC-32 of every member, streamed (local and remote).
    * ``full``: also the per-sample digests of column ``taco_gdal:checksum``.

    Plugin formats answer through their container's ``verify`` hook.

    Args:
        path: the dataset (any path :func:`taco_gdal.load` accepts).
        level: ``"structure"``, ``"crc"`` (default) or ``"full"``.
        repair: ZIP only: first restore a TACO_HEADER left inconsistent by an
            interrupted in-place update.

    Raises:
        TacoValidationError: ``level`` is not one of the three.
        TacoIOError: the location does not exist.

    Example:
        >>> taco_gdal.verify("dataset.tacozip", level="crc").ok
        True
        >>> frame = taco_gdal.load("dataset.tacozip").frame(internal=True)  # internal:* too
        >>> where = int(frame["internal:offset"][1]) + 100
        >>> with open("dataset.tacozip", "r+b") as f:  # flip one byte of sample s001
        ...     byte = f.read(where + 1)[where]
        ...     _ = f.seek(where)
        ...     _ = f.write(bytes([byte ^ 0xFF]))
        >>> report = taco_gdal.verify("dataset.tacozip", level="crc")
        >>> report.ok, [f.code for f in report.failures]
        (False, ['CRC_MISMATCH'])
        >>> report.failures[0].member, report.failures[0].row_id
        ('DATA/s001', 'level0:1 (s001)')
    """
    if level not in LEVELS:
        raise TacoValidationError(f"verify level must be one of {list(LEVELS)}, found {level!r}")
    given, probe, container_class = locate(path)
    out = Collector()
    counts: dict[str, int] = {}
    fmt = container_class.format
    if fmt == "zip":
        if repair:
            from taco_gdal.io.header import repair_header

            repair_header(probe.path)
        verify_zip(probe.path, level, out, _zip_levels(probe.path, out), counts)
    else:
        opened = try_open(container_class, probe, out)
        if opened is not None and fmt == "folder":
            verify_folder(probe.path, level, out, opened.levels, counts)
        elif opened is not None and fmt == "tacocat":
            _verify_tacocat(opened, level, out, counts)
        elif opened is not None:
            hook = getattr(opened, "verify", None)
            failures = hook(level) if callable(hook) else verify_ranges(opened, level)
            counts["rows"] = sum(t.num_rows for t in opened.levels)
            _copy(failures, out)
    if out.dropped:
        counts["failures_not_listed"] = out.dropped
    return Report(given, "verify", level, tuple(out.failures), counts)
