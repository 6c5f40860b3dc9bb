"""The read profile: which options, when the user's own settings win, thread-locality."""

from __future__ import annotations

import threading

import pytest
from osgeo import gdal

import taco_gdal.env
from taco_gdal import Env
from taco_gdal.env import get_config
from taco_gdal.io.profile import (
    INGEST_LIMIT,
    metadata_env,
    network_options,
    read_profile,
    sample_env,
)


def test_sample_profile_sets_ingest_size_and_empty_dir() -> None:
    options = read_profile(400_000)
    assert options["GDAL_INGESTED_BYTES_AT_OPEN"] == "400000"
    assert options["GDAL_DISABLE_READDIR_ON_OPEN"] == "EMPTY_DIR"
    assert int(options["GDAL_HTTP_MAX_RETRY"]) >= 3
    assert float(options["GDAL_HTTP_RETRY_DELAY"]) > 0
    assert "CPL_VSIL_CURL_USE_HEAD" not in options  # NO downloads whole files on GDAL 3.6


@pytest.mark.parametrize("size", [None, 0, INGEST_LIMIT + 1])
def test_no_ingest_size_for_unknown_empty_or_large_samples(size: int | None) -> None:
    assert "GDAL_INGESTED_BYTES_AT_OPEN" not in read_profile(size)
    assert read_profile(INGEST_LIMIT)["GDAL_INGESTED_BYTES_AT_OPEN"] == str(INGEST_LIMIT)


def test_retry_codes_only_from_gdal_3_10(monkeypatch: pytest.MonkeyPatch) -> None:
    assert int(gdal.VersionInfo("VERSION_NUM")) < 3_10_00_00  # Debian's 3.6.2 here
    assert "GDAL_HTTP_RETRY_CODES" not in network_options()
    monkeypatch.setattr(taco_gdal.env, "_gdal_version", lambda: 3_10_03_00)
    codes = network_options()["GDAL_HTTP_RETRY_CODES"].split(",")
    assert {"429", "500", "502", "503", "504"} <= set(codes)


def test_user_settings_win() -> None:
    with Env(GDAL_HTTP_MAX_RETRY="9", GDAL_DISABLE_READDIR_ON_OPEN="TRUE"):
        options = read_profile(1000)
    assert "GDAL_HTTP_MAX_RETRY" not in options
    assert "GDAL_DISABLE_READDIR_ON_OPEN" not in options
    assert options["GDAL_INGESTED_BYTES_AT_OPEN"] == "1000"


def test_restricted_extensions_get_taco_suffixes() -> None:
    assert "CPL_VSIL_CURL_ALLOWED_EXTENSIONS" not in read_profile(10)
    with Env(CPL_VSIL_CURL_ALLOWED_EXTENSIONS=".tif, .ZIP"):
        sample = read_profile(10)["CPL_VSIL_CURL_ALLOWED_EXTENSIONS"]
        with metadata_env():
            metadata = get_config("CPL_VSIL_CURL_ALLOWED_EXTENSIONS")
    assert sample.split(",") == [".tif", ".ZIP", ".tacozip"]
    assert metadata is not None
    assert {".tacozip", ".parquet", ".json", "__meta__"} <= set(metadata.split(","))


def test_sample_env_is_thread_local_and_restored() -> None:
    seen: list[str | None] = []
    with sample_env(1234):
        assert get_config("GDAL_INGESTED_BYTES_AT_OPEN") == "1234"
        worker = threading.Thread(
            target=lambda: seen.append(get_config("GDAL_INGESTED_BYTES_AT_OPEN"))
        )
        worker.start()
        worker.join()
    assert seen == [None]
    assert get_config("GDAL_INGESTED_BYTES_AT_OPEN") is None
