"""``taco_gdal.Env()``: the read profile by default, exact options when given, user wins."""

from __future__ import annotations

import threading

from osgeo import gdal

import taco_gdal
from taco_gdal.env import get_config
from taco_gdal.io.profile import INGEST_LIMIT, metadata_env, sample_env

INGEST = "GDAL_INGESTED_BYTES_AT_OPEN"
READDIR = "GDAL_DISABLE_READDIR_ON_OPEN"


def test_empty_env_carries_the_read_profile() -> None:
    assert get_config(INGEST) is None
    with taco_gdal.Env():
        assert get_config(INGEST) == str(INGEST_LIMIT)
        assert get_config(READDIR) == "EMPTY_DIR"
        assert int(get_config("GDAL_HTTP_MAX_RETRY") or 0) >= 3
        seen: list[str | None] = []
        worker = threading.Thread(target=lambda: seen.append(get_config(INGEST)))
        worker.start()
        worker.join()
        assert seen == [None]  # thread-local, as every Env
    assert get_config(INGEST) is None
    assert get_config(READDIR) is None


def test_explicit_options_set_exactly_those() -> None:
    with taco_gdal.Env(GDAL_HTTP_MAX_RETRY="2"):
        assert get_config(INGEST) is None
        assert get_config(READDIR) is None
        assert get_config("GDAL_HTTP_MAX_RETRY") == "2"
    with taco_gdal.Env(read_profile=True, GDAL_HTTP_MAX_RETRY="2"):
        assert get_config(INGEST) == str(INGEST_LIMIT)
        assert get_config("GDAL_HTTP_MAX_RETRY") == "2"  # explicit options win
    with taco_gdal.Env(read_profile=False):
        assert get_config(INGEST) is None


def test_user_settings_win_over_the_profile() -> None:
    user = taco_gdal.Env(GDAL_INGESTED_BYTES_AT_OPEN="1000", GDAL_DISABLE_READDIR_ON_OPEN="TRUE")
    with user, taco_gdal.Env():
        assert get_config(INGEST) == "1000"
        assert get_config(READDIR) == "TRUE"
        with sample_env(5000):  # per-sample ingest size still applies inside
            assert get_config(INGEST) == "5000"
        assert get_config(INGEST) == "1000"
    gdal.SetConfigOption("GDAL_HTTP_MAX_RETRY", "7")  # a process-wide user setting
    try:
        with taco_gdal.Env():
            assert get_config("GDAL_HTTP_MAX_RETRY") == "7"
    finally:
        gdal.SetConfigOption("GDAL_HTTP_MAX_RETRY", None)


def test_internal_envs_never_add_the_profile() -> None:
    with metadata_env():
        assert get_config(INGEST) is None
    with taco_gdal.env.config_options({}):
        assert get_config(INGEST) is None
