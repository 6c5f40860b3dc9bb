"""Printing a verify/validate report and choosing the exit code (1 when an error, not a
warning, was found)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from taco_gdal.cli._errors import EXIT_FAILED
from taco_gdal.cli._options import Common
from taco_gdal.cli._output import emit_json

if TYPE_CHECKING:
    from taco_gdal.verify.report import Report

__all__ = ["print_report"]


def _line(failure: Any) -> str:
    where = " ".join(
        part
        for part in (
            f"member={failure.member}" if failure.member else "",
            f"row={failure.row_id}" if failure.row_id else "",
        )
        if part
    )
    found = ""
    if failure.expected is not None or failure.found is not None:
        found = f" (expected {failure.expected!r}, found {failure.found!r})"
    code = failure.code if failure.severity == "error" else f"{failure.code} ({failure.severity})"
    return f"{code}: {failure.message}{found}{' ' + where if where else ''}"


def print_report(common: Common, report: Report, check: str, path: str) -> None:
    """Print ``report`` (JSON or one line per failure); exit 1 when it is not ok."""
    if common.json:
        emit_json(report.to_dict())
    else:
        failures = list(report.failures)
        if not failures:
            if not common.quiet:
                click.echo(f"{check} {path}: OK")
        else:
            errors = [f for f in failures if f.severity == "error"]
            if errors:
                click.echo(f"{check} {path}: {len(errors)} failure(s)")
            else:
                click.echo(f"{check} {path}: OK, {len(failures)} warning(s)")
            for failure in failures:
                click.echo(f"  {_line(failure)}")
    if not report.ok:
        raise click.exceptions.Exit(EXIT_FAILED)
