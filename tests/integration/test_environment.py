"""One libgdal per process, shared by osgeo, rasterio and pyogrio."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pyogrio
import rasterio
from osgeo import gdal

import taco_gdal


def test_one_libgdal_and_equal_versions():
    with open("/proc/self/maps") as maps:
        libs = {line.split()[-1] for line in maps if "libgdal" in line}
    assert len(libs) == 1, libs
    assert gdal.__version__ == rasterio.__gdal_version__ == pyogrio.__gdal_version_string__


def test_gdal_array_was_built():
    from osgeo import gdal_array

    assert gdal_array.NumericTypeCodeToGDALTypeCode is not None


def test_vsimem_written_by_osgeo_is_read_by_rasterio(tmp_path):
    import numpy as np

    src = tmp_path / "a.tif"
    profile = {"driver": "GTiff", "width": 4, "height": 3, "count": 1, "dtype": "uint8"}
    transform = rasterio.transform.from_origin(0, 3, 1, 1)
    with rasterio.open(src, "w", crs="EPSG:4326", transform=transform, **profile) as dst:
        dst.write(np.arange(12, dtype="uint8").reshape(1, 3, 4))
    gdal.FileFromMemBuffer("/vsimem/shared.tif", src.read_bytes())
    try:
        with rasterio.open("/vsimem/shared.tif") as ds:
            assert ds.read(1).tolist() == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
    finally:
        gdal.Unlink("/vsimem/shared.tif")


def test_env_is_scoped_thread_local_and_seen_by_rasterio():
    key = "TACO_GDAL_TEST_OPTION"
    assert gdal.GetConfigOption(key) is None
    with taco_gdal.Env(**{key: "outer"}):
        assert rasterio.env.get_gdal_config(key) == "outer"
        with taco_gdal.Env(**{key: True}):
            assert gdal.GetConfigOption(key) == "YES"
        assert gdal.GetConfigOption(key) == "outer"
        seen: list[str | None] = []
        t = threading.Thread(target=lambda: seen.append(gdal.GetConfigOption(key)))
        t.start()
        t.join()
        assert seen == [None]  # other threads are not affected
    assert gdal.GetConfigOption(key) is None


def test_env_restores_after_exception():
    key = "TACO_GDAL_TEST_OPTION2"
    try:
        with taco_gdal.Env(**{key: "x"}):
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert gdal.GetConfigOption(key) is None


WATCHED_OPTIONS = (
    "GDAL_DISABLE_READDIR_ON_OPEN",
    "GDAL_INGESTED_BYTES_AT_OPEN",
    "CPL_VSIL_CURL_ALLOWED_EXTENSIONS",
    "GDAL_HTTP_MAX_RETRY",
    "GDAL_HTTP_RETRY_DELAY",
    "CPL_VSIL_NETWORK_STATS_ENABLED",
    "CPL_VSIL_CURL_CHUNK_SIZE",
)


def test_importing_taco_gdal_sets_no_gdal_option_or_exception_mode():
    code = (
        "from osgeo import gdal\n"
        "before = gdal.GetUseExceptions()\n"
        "import taco_gdal, taco_gdal.io.vsi, taco_gdal.io.header\n"
        f"print([k for k in {WATCHED_OPTIONS!r} if gdal.GetConfigOption(k) is not None])\n"
        "print(before == gdal.GetUseExceptions())\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in WATCHED_OPTIONS}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.split("\n")[:2] == ["[]", "True"]
