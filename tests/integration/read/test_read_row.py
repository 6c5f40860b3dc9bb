"""``ds.read(key)`` answers from one Arrow row exactly what ``ds.data.read(key)`` answers.

Every reference shape and container, unfiltered and filtered, by position
(negative too) and by id: FILE samples give the same GDAL path, FOLDER samples
the same children frame (which navigates on the same way). Keys ``.data``
refuses are refused by ``ds.read`` with the same error and message.
"""

from __future__ import annotations

import pandas as pd
import pytest

import taco_gdal.read as reader
from taco_gdal.errors import TacoError
from taco_gdal.read.dataset import TacoDataset
from tests.integration.read.conftest import RefDataset


def _same(ds: TacoDataset, key: int | str) -> None:
    expected = ds.data.read(key)
    got = ds.read(key)
    if isinstance(expected, str):
        assert got == expected
        return
    assert not isinstance(got, str)
    pd.testing.assert_frame_equal(got, expected)
    assert got.attrs == expected.attrs
    for position in range(len(expected)):
        deeper, wanted = got.read(position), expected.read(position)
        if isinstance(wanted, str):
            assert deeper == wanted
        else:
            assert not isinstance(deeper, str)
            pd.testing.assert_frame_equal(deeper, wanted)


def _views(ds: TacoDataset, ref: RefDataset) -> list[TacoDataset]:
    first = ref.level(0)[0]
    lon, lat = first.centroid
    boxed = ds.filter_bbox(lon - 0.1, lat - 0.1, lon + 0.1, lat + 0.1)
    return [ds, boxed, ds.sql("SELECT * FROM data ORDER BY id DESC")]


def test_read_matches_data_read(ref: RefDataset) -> None:
    ds = reader.load(ref.path)
    for view in _views(ds, ref):
        ids = [str(v) for v in view.data["id"]]
        assert ids
        for key in [*range(len(ids)), -1, -len(ids), *ids]:
            _same(view, key)


@pytest.mark.parametrize("key", [10**6, -(10**6), "no-such-id", 1.5, True])
def test_refused_keys_raise_as_data_read(ref: RefDataset, key: object) -> None:
    ds = reader.load(ref.path)
    with pytest.raises(TacoError) as expected:
        ds.data.read(key)  # type: ignore[arg-type]
    with pytest.raises(type(expected.value)) as got:
        ds.read(key)  # type: ignore[arg-type]
    assert str(got.value) == str(expected.value)
