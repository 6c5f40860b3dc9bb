"""Time ranges for ``filter_datetime``: what the user types -> exact UTC bounds.

A year, month or day is that whole period, a datetime that instant; ``"a/b"`` and
``(a, b)`` are inclusive ranges (``..``, ``""`` or ``None``: open).  Naive values are UTC.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any, Final

import numpy as np
import pandas as pd

from taco_gdal.errors import TacoQueryError

__all__ = ["VALID_FORMS", "TimeRange", "parse_range"]

VALID_FORMS: Final = (
    "'2024' (a year)",
    "'2024-03' (a month)",
    "'2024-03-15' (a day)",
    "'2024-03-15T10:30:00Z' (an instant)",
    "'2024-01/2024-06' or '2024/..' or '../2024-03-15' (a range, '..' = open)",
    "datetime, date, pandas.Timestamp or numpy.datetime64 objects, or a (start, end) tuple",
)
"""What :func:`parse_range` accepts, as error messages list it."""
_FORMS: Final = "; ".join(VALID_FORMS)

_OPEN: Final = ("", "..")
_YEAR = re.compile(r"^\d{4}$")
_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
_SLASHED = re.compile(r"(?<!\d)(\d{1,2})[/.](\d{1,2})[/.](\d{4})(?!\d)")


@dataclass(frozen=True, slots=True)
class TimeRange:
    """``start <= t <= end`` (``t < end`` unless ``end_inclusive``); naive UTC, None open."""

    start: datetime | None
    end: datetime | None
    end_inclusive: bool = True


@dataclass(frozen=True, slots=True)
class _Period:
    """A calendar period ``[first, after)`` (a year, a month or a day)."""

    first: datetime
    after: datetime


def _utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        return value
    return value.astimezone(UTC).replace(tzinfo=None)


def _day(value: date) -> _Period:
    first = datetime(value.year, value.month, value.day)
    return _Period(first, first + timedelta(days=1))


def _slashed_hint(text: str) -> str:
    """A note giving the ISO 8601 day for ``03/15/2024``-like text, else ``""``."""
    match = _SLASHED.search(text)
    if match is None:
        return ""
    a, b, year = (int(v) for v in match.groups())
    readings = []
    if a <= 12 and b <= 31:
        readings.append(f"'{year:04d}-{a:02d}-{b:02d}'")  # month first
    if b <= 12 and a <= 31 and a != b:
        readings.append(f"'{year:04d}-{b:02d}-{a:02d}'")  # day first
    if not readings:
        return ""
    return f": it is not ISO 8601, which writes that day as {' or '.join(readings)}"


def _parse_text(text: str, what: str, given: Any) -> datetime | _Period | None:
    if text in _OPEN:
        return None
    if _YEAR.match(text):
        year = int(text)
        return _Period(datetime(year, 1, 1), datetime(year + 1, 1, 1))
    month = _MONTH.match(text)
    try:
        if month is not None:
            year, number = int(month[1]), int(month[2])
            first = datetime(year, number, 1)
            after = datetime(year + number // 12, number % 12 + 1, 1)
            return _Period(first, after)
        if len(text) in (8, 10) and "T" not in text and " " not in text:
            return _day(date.fromisoformat(text))
        return _utc(datetime.fromisoformat(text))
    except ValueError as exc:
        raise TacoQueryError(
            f"filter_datetime: {what} {text!r} (from {given!r}) is not an ISO 8601 time"
            f"{_slashed_hint(text)}; expected one of: {_FORMS}"
        ) from exc


def _bound(value: Any, what: str, given: Any) -> datetime | _Period | None:
    """An instant, a period or None (open)."""
    if value is None:
        return None
    if isinstance(value, np.datetime64 | pd.Timestamp):
        if pd.isna(value):
            return None
        value = pd.Timestamp(value).to_pydatetime()
    if isinstance(value, datetime):
        return _utc(value)
    if isinstance(value, date):
        return _day(value)
    if isinstance(value, str):
        return _parse_text(value.strip(), what, given)
    raise TacoQueryError(
        f"filter_datetime: {what} must be a time, got {type(value).__name__} {value!r}; "
        f"expected one of: {_FORMS}"
    )


def _typed(value: Any) -> str:
    """A bound as the user gave it: text quoted, objects as ``str`` shows them."""
    return repr(value) if isinstance(value, str) else f"{value!s}"


def _split(value: str) -> list[str]:
    parts = value.split("/")
    if len(parts) == 2:
        return parts
    hint = _slashed_hint(value.strip())
    if hint:
        raise TacoQueryError(f"filter_datetime: {value!r}{hint}; expected one of: {_FORMS}")
    raise TacoQueryError(
        f"filter_datetime: expected 'start/end' with one '/', got {value!r}; "
        f"expected one of: {_FORMS}"
    )


def parse_range(value: Any) -> TimeRange:
    """Normalise a user time range (the accepted forms: module docstring, :data:`VALID_FORMS`).

    Raises:
        TacoQueryError: unparsable values, a start after the end, or no bound at all.

    Example:
        >>> span = parse_range("2023-01-01/2023-01-31")
        >>> span.start, span.end, span.end_inclusive
        (datetime.datetime(2023, 1, 1, 0, 0), datetime.datetime(2023, 2, 1, 0, 0), False)
        >>> parse_range("2024").end
        datetime.datetime(2025, 1, 1, 0, 0)
        >>> parse_range("2024-03/..").end is None
        True
    """
    if isinstance(value, str) and "/" in value:
        parts = _split(value)
        typed: tuple[Any, Any] = (parts[0].strip(), parts[1].strip())
        first, last = _bound(parts[0], "start", value), _bound(parts[1], "end", value)
    elif isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise TacoQueryError(
                f"filter_datetime: a tuple range needs (start, end), got {len(value)} values "
                f"{value!r}"
            )
        typed = (value[0], value[1])
        first, last = _bound(value[0], "start", value), _bound(value[1], "end", value)
    else:
        typed = (value, value)
        first = last = _bound(value, "value", value)
        if first is None:
            raise TacoQueryError(
                f"filter_datetime: {value!r} is not a time or a range; expected one of: {_FORMS}"
            )
    start = first.first if isinstance(first, _Period) else first
    end, inclusive = (last.after, False) if isinstance(last, _Period) else (last, True)
    if start is None and end is None:
        raise TacoQueryError(f"filter_datetime: the range {value!r} is open at both ends")
    if start is not None and end is not None and (start > end or (start == end and not inclusive)):
        raise TacoQueryError(
            f"filter_datetime: expected a start no later than the end, found start "
            f"{_typed(typed[0])} after end {_typed(typed[1])} in {value!r}; swap them"
        )
    return TimeRange(start, end, inclusive)
