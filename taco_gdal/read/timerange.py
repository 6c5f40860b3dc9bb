"""Time ranges for ``filter_datetime``: what the user types -> exact UTC bounds.

Bounds are compared with the stored timestamps to the microsecond, never
truncated to dates:

* a datetime (object or ISO string with a time) is that instant;
* a date (``date`` object or ``YYYY-MM-DD`` string) is the whole day:
  as a start it means 00:00, as an end it means "before the next day";
* ``"a/b"`` and ``(a, b)`` are ranges, inclusive at both ends; ``..`` or an
  empty string (or ``None`` in a tuple) leaves an end open;
* naive values are UTC; aware values are converted to UTC.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

import numpy as np
import pandas as pd

from taco_gdal.errors import TacoQueryError

__all__ = ["TimeRange", "parse_range"]

_OPEN = ("", "..")
_DATE_LENGTH = len("2023-01-01")


@dataclass(frozen=True, slots=True)
class TimeRange:
    """``start <= t`` and ``t <= end`` (or ``t < end`` when ``end_inclusive`` is False).

    Bounds are naive datetimes in UTC; ``None`` is an open end.
    """

    start: datetime | None
    end: datetime | None
    end_inclusive: bool = True


def _utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        return value
    return value.astimezone(UTC).replace(tzinfo=None)


def _bound(value: Any, what: str) -> datetime | date | None:
    """A datetime (an instant), a date (a day) or None (open)."""
    if value is None:
        return None
    if isinstance(value, np.datetime64):
        value = pd.Timestamp(value).to_pydatetime()
    if isinstance(value, datetime):
        return _utc(value)
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        text = value.strip()
        if text in _OPEN:
            return None
        try:
            if len(text) == _DATE_LENGTH:
                return date.fromisoformat(text)
            return _utc(datetime.fromisoformat(text))
        except ValueError as exc:
            raise TacoQueryError(
                f"filter_datetime: {what} {value!r} is not an ISO 8601 date or datetime "
                "(e.g. '2023-01-31' or '2023-01-31T12:00:00Z')"
            ) from exc
    raise TacoQueryError(
        f"filter_datetime: {what} must be a datetime, a date or an ISO string, got "
        f"{type(value).__name__} {value!r}"
    )


def _start(value: datetime | date | None) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    return datetime(value.year, value.month, value.day)


def _end(value: datetime | date | None) -> tuple[datetime | None, bool]:
    if value is None or isinstance(value, datetime):
        return value, True
    return datetime(value.year, value.month, value.day) + timedelta(days=1), False


def parse_range(value: Any) -> TimeRange:
    """Normalise a user time range.

    Raises:
        TacoQueryError: unparsable values, a start after the end, or no bound at all.

    Example:
        >>> span = parse_range("2023-01-01/2023-01-31")
        >>> span.start, span.end, span.end_inclusive
        (datetime.datetime(2023, 1, 1, 0, 0), datetime.datetime(2023, 2, 1, 0, 0), False)
    """
    if isinstance(value, str) and "/" in value:
        parts: list[Any] = value.split("/")
        if len(parts) != 2:
            raise TacoQueryError(f"filter_datetime: expected 'start/end', got {value!r}")
        first, last = _bound(parts[0], "start"), _bound(parts[1], "end")
    elif isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise TacoQueryError(
                f"filter_datetime: a tuple range needs (start, end), got {len(value)} values"
            )
        first, last = _bound(value[0], "start"), _bound(value[1], "end")
    else:
        first = last = _bound(value, "value")
        if first is None:
            raise TacoQueryError(f"filter_datetime: {value!r} is not a time or a range")
    start = _start(first)
    end, inclusive = _end(last)
    if start is None and end is None:
        raise TacoQueryError(f"filter_datetime: the range {value!r} is open at both ends")
    if start is not None and end is not None and (start > end or (start == end and not inclusive)):
        raise TacoQueryError(f"filter_datetime: the start {start} is after the end {end}")
    return TimeRange(start, end, inclusive)
