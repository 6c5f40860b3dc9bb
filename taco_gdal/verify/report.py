"""What :func:`~taco_gdal.verify` and :func:`~taco_gdal.validate` return: a frozen report.

Each :class:`Failure` has a stable ``code`` (:mod:`taco_gdal.verify.codes`). A
known defect of an older writer that readers work around is a ``warning``: a
report with only warnings is ``ok`` and lists them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Failure", "Report"]

Scalar = str | int | float | bool | None


@dataclass(frozen=True, slots=True)
class Failure:
    """One thing that is wrong with a dataset.

    Attributes:
        code: stable identifier (``CRC_MISMATCH``, ``INVALID_OFFSET``, ...).
        message: what was expected, what was found, where.
        member: the archive member or file concerned, if any.
        row_id: ``"level{L}:{row}"`` (or ``"level{L}:{row} ({id})"``) when a row is concerned.
        expected: the value the format or the metadata requires.
        found: the value on disk.
        severity: ``"error"``, or ``"warning"`` for a known defect of an older writer.

    Example:
        >>> Failure("CRC_MISMATCH", "bad CRC", member="DATA/a", expected="0x1", found="0x2").code
        'CRC_MISMATCH'
    """

    code: str
    message: str
    member: str | None = None
    row_id: str | None = None
    expected: Scalar = None
    found: Scalar = None
    severity: str = "error"

    def to_dict(self) -> dict[str, Scalar]:
        """The failure as JSON-able data."""
        return asdict(self)

    def __str__(self) -> str:
        where = " ".join(
            part
            for part in (self.member and f"[{self.member}]", self.row_id and f"<{self.row_id}>")
            if part
        )
        label = self.code if self.severity == "error" else f"{self.code} ({self.severity})"
        return f"{label}: {self.message}" + (f" {where}" if where else "")


@dataclass(frozen=True, slots=True)
class Report:
    """The outcome of one verify or validate run.

    Attributes:
        path: what was checked (as given).
        check: ``"verify"`` or ``"validate"``.
        level: ``structure``, ``crc`` or ``full`` for verify; ``rules`` for validate.
        failures: every failure found, in the order found.
        checked: counts of what was looked at (``members``, ``rows``, ``bytes``, ...).

    Example:
        >>> report = Report("x.tacozip", "verify", "crc", ())
        >>> report.ok, str(report)
        (True, 'verify (crc) x.tacozip: OK')
    """

    path: str
    check: str
    level: str
    failures: tuple[Failure, ...]
    checked: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when nothing failed (warnings allowed)."""
        return not self.errors

    @property
    def errors(self) -> tuple[Failure, ...]:
        """The failures that make the report fail."""
        return tuple(f for f in self.failures if f.severity == "error")

    @property
    def warnings(self) -> tuple[Failure, ...]:
        """Known defects of older writer generations: listed, not failing."""
        return tuple(f for f in self.failures if f.severity != "error")

    @property
    def codes(self) -> frozenset[str]:
        """The distinct failure codes."""
        return frozenset(f.code for f in self.failures)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-able data."""
        return {
            "path": self.path,
            "check": self.check,
            "level": self.level,
            "ok": self.ok,
            "checked": dict(self.checked),
            "failures": [f.to_dict() for f in self.failures],
        }

    def __str__(self) -> str:
        head = f"{self.check} ({self.level}) {self.path}: "
        if not self.failures:
            return head + "OK"
        if self.ok:
            lines = [head + f"OK, {len(self.warnings)} warning(s)"]
        else:
            lines = [head + f"{len(self.errors)} failure(s)"]
        lines += [f"  {failure}" for failure in self.failures]
        return "\n".join(lines)
