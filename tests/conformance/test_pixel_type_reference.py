"""``taco_gdal:data_type`` / ``taco_gdal:nodata`` are extension columns tacoreader 2.4.21 ignores.

The same GeoTIFFs written by ``samples_from_rasters`` (with the columns) and as
plain STAC + ISTAC samples (without) load in tacoreader alike: two more metadata
columns, holding what rasterio reports for each file, and the same sample bytes.
"""

from __future__ import annotations

import pathlib
from typing import Any

import rasterio

from taco_gdal.format.names import DATA_TYPE, NODATA
from tests.integration.cube._data import write_mixed


def test_tacoreader_reads_a_dataset_with_pixel_type_columns(
    tacoreader_view: Any, tmp_path: pathlib.Path
) -> None:
    typed = write_mixed(tmp_path / "typed")
    plain = write_mixed(tmp_path / "plain", pixel_type=False)
    with_columns = tacoreader_view(typed, [], keep_paths=True)
    without = tacoreader_view(plain, [])
    columns = with_columns["columns"]["0"]
    assert {DATA_TYPE, NODATA} <= set(columns)
    assert [c for c in columns if c not in (DATA_TYPE, NODATA)] == without["columns"]["0"]
    assert len(with_columns["tree"]) == len(without["tree"]) == 9
    for row, other in zip(with_columns["tree"], without["tree"], strict=True):
        assert (row["id"], row["sha256"]) == (other["id"], other["sha256"])
        values = dict(row["values"])
        with rasterio.open(row["vsi"]) as src:  # the path tacoreader hands out
            assert (values.pop(DATA_TYPE), values.pop(NODATA)) == (src.dtypes[0], src.nodata)
        assert values == other["values"]
