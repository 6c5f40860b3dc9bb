"""filter_datetime's range parser: ISO 8601 years, months, days, instants, open intervals."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import numpy as np
import pandas as pd
import pytest

from taco_gdal.errors import TacoQueryError
from taco_gdal.read.query.timerange import TimeRange, parse_range


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("2024", TimeRange(datetime(2024, 1, 1), datetime(2025, 1, 1), False)),
        ("2024-03", TimeRange(datetime(2024, 3, 1), datetime(2024, 4, 1), False)),
        ("2024-12", TimeRange(datetime(2024, 12, 1), datetime(2025, 1, 1), False)),
        ("2024-03-15", TimeRange(datetime(2024, 3, 15), datetime(2024, 3, 16), False)),
        ("20240315", TimeRange(datetime(2024, 3, 15), datetime(2024, 3, 16), False)),
        (
            "2024-03-15T10:30:00Z",
            TimeRange(datetime(2024, 3, 15, 10, 30), datetime(2024, 3, 15, 10, 30), True),
        ),
        ("2024/..", TimeRange(datetime(2024, 1, 1), None, True)),
        ("../2024-03", TimeRange(None, datetime(2024, 4, 1), False)),
        ("2023/2024-02", TimeRange(datetime(2023, 1, 1), datetime(2024, 3, 1), False)),
        (
            ("2024-01-01T00:00:00+02:00", None),
            TimeRange(datetime(2023, 12, 31, 22), None, True),
        ),
        (date(2024, 2, 29), TimeRange(datetime(2024, 2, 29), datetime(2024, 3, 1), False)),
        (
            pd.Timestamp("2024-03-15 10:00", tz="Europe/Madrid"),
            TimeRange(datetime(2024, 3, 15, 9), datetime(2024, 3, 15, 9), True),
        ),
        (
            (pd.Timestamp("2024-01-01"), np.datetime64("2024-02-01T00:00:00")),
            TimeRange(datetime(2024, 1, 1), datetime(2024, 2, 1), True),
        ),
        (
            datetime(2024, 1, 1, 12, tzinfo=timezone(timedelta(hours=-3))),
            TimeRange(datetime(2024, 1, 1, 15), datetime(2024, 1, 1, 15), True),
        ),
        (
            datetime(2024, 1, 1, 12),  # naive = UTC
            TimeRange(datetime(2024, 1, 1, 12), datetime(2024, 1, 1, 12), True),
        ),
    ],
    ids=repr,
)
def test_accepted_forms(given: object, expected: TimeRange) -> None:
    assert parse_range(given) == expected


def test_aware_and_naive_utc_agree() -> None:
    assert parse_range(datetime(2024, 5, 1, tzinfo=UTC)) == parse_range(datetime(2024, 5, 1))


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        ("03/15/2024", "'2024-03-15'"),
        ("15/03/2024", "'2024-03-15'"),
        ("03/04/2024", "'2024-03-04' or '2024-04-03'"),
        ("2024-03-15/03/20/2024", "'2024-03-20'"),
    ],
)
def test_slashed_dates_say_not_iso_and_show_the_iso_form(given: str, shown: str) -> None:
    with pytest.raises(TacoQueryError) as info:
        parse_range(given)
    message = str(info.value)
    assert repr(given) in message
    assert "not ISO 8601" in message
    assert shown in message
    assert "'2024-03' (a month)" in message  # the valid forms are listed


@pytest.mark.parametrize("given", ["yesterday", "2024-13", "2024-02-30", "24"])
def test_other_bad_text_names_what_was_given_and_the_forms(given: str) -> None:
    with pytest.raises(TacoQueryError, match="expected one of: '2024' \\(a year\\)") as info:
        parse_range(given)
    assert repr(given) in str(info.value)


def test_bad_types_and_shapes() -> None:
    with pytest.raises(TacoQueryError, match="int 12"):
        parse_range(12)
    with pytest.raises(TacoQueryError, match="open at both ends"):
        parse_range("../..")
    with pytest.raises(TacoQueryError, match="found start '2025' after end '2024-06' in"):
        parse_range("2025/2024-06")
    with pytest.raises(TacoQueryError, match="needs \\(start, end\\)"):
        parse_range(("2024",))
