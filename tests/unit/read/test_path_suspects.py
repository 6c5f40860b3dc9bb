"""The Arrow pre-filter of FOLDER paths never lets through a path ``escape_reason`` refuses.

``check_folder_paths`` runs :func:`escape_reason` only on the rows ``_suspects`` picks;
every value it would refuse must be among them, including the first one in row order.
"""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from taco_gdal.read.opening.containers._paths import _suspects, escape_reason

_PIECES = st.sampled_from(["a", "b0", "..", ".", "", "/", "\\", ":", "://", "\x00", "C:", "é"])
_VALUES = st.one_of(st.none(), st.text(max_size=12), st.lists(_PIECES, max_size=6).map("".join))


@given(st.lists(_VALUES, max_size=40))
def test_every_refused_path_is_a_suspect(values: list[str | None]) -> None:
    suspects = set(_suspects(pa.chunked_array([pa.array(values, pa.string())])).tolist())
    refused = {i for i, v in enumerate(values) if escape_reason("" if v is None else v)}
    assert refused <= suspects


def test_plain_paths_are_not_suspects() -> None:
    values = ["tile0/b02", "tile0/s1/", "x.tif", "a.b/c"]
    assert all(escape_reason(v) is None for v in values)
    assert _suspects(pa.chunked_array([pa.array(values)])).size == 0
