"""VSI path building and parsing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from taco_gdal.errors import TacoFormatError
from taco_gdal.format import vsi


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("s3://bucket/a/b.tacozip", "/vsis3/bucket/a/b.tacozip"),
        ("gs://bucket/b.tacozip", "/vsigs/bucket/b.tacozip"),
        ("az://container/b.tacozip", "/vsiaz/container/b.tacozip"),
        ("http://127.0.0.1:8000/b.tacozip", "/vsicurl/http://127.0.0.1:8000/b.tacozip"),
        ("https://host/b.tacozip", "/vsicurl/https://host/b.tacozip"),
        ("/vsis3/bucket/x", "/vsis3/bucket/x"),
        ("/vsicurl/https://h/x", "/vsicurl/https://h/x"),
    ],
)
def test_to_vsi(given, expected):
    assert vsi.to_vsi(given) == expected


def test_local_paths_made_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert vsi.to_vsi("data/x.tacozip") == os.path.join(str(tmp_path), "data/x.tacozip")
    assert vsi.to_vsi(Path("y.zip")) == os.path.join(str(tmp_path), "y.zip")


def test_subfile_with_commas_and_huge_offsets():
    path = vsi.build_subfile(2**40 + 3, 5_000_000_000, "/data/a,b,c.tacozip")
    assert path == "/vsisubfile/1099511627779_5000000000,/data/a,b,c.tacozip"
    parsed = vsi.parse_subfile(path)
    assert parsed == vsi.SubfilePath(2**40 + 3, 5_000_000_000, "/data/a,b,c.tacozip")


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("/vsizip/x.zip/a", "missing prefix"),
        ("/vsisubfile/10_20/x.zip", "no ','"),
        ("/vsisubfile/1020,/x.zip", "offset}_{size"),
        ("/vsisubfile/a_20,/x.zip", "non-negative integers"),
        ("/vsisubfile/-1_20,/x.zip", "non-negative integers"),
        ("/vsisubfile/1_2,", "no container"),
    ],
)
def test_parse_errors(bad, message):
    with pytest.raises(TacoFormatError, match=message):
        vsi.parse_subfile(bad)


def test_is_remote_and_parent():
    assert vsi.is_remote("/vsisubfile/1_2,/vsis3/b/x.zip")
    assert vsi.is_remote("/vsicurl/http://h/x")
    assert not vsi.is_remote("/vsisubfile/1_2,/tmp/x.zip")
    assert vsi.parent("/vsicurl/http://h:1/d/x.tacozip") == "/vsicurl/http://h:1/d"
    assert vsi.parent("/vsis3/b/d/x") == "/vsis3/b/d"
    assert vsi.join("/vsis3/b/", "DATA", "a") == "/vsis3/b/DATA/a"
