"""Regression tests for the held-out fuzzing of issue 44: foreign exceptions from plugins.

Every JSON document of every container goes through ``taco_gdal.containers.loads_json``
(bounded depth and number length); a TARIDX member name that is not UTF-8 is refused.
"""

from __future__ import annotations

import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

import taco_gdal
from taco_caf.layout import parse_index as parse_caf_index
from taco_cozip.container import parse_json as parse_cozip_json
from taco_gdal.containers import MAX_JSON_DEPTH, loads_json
from taco_gdal.errors import TacoError, TacoFormatError
from taco_taridx.write import write_taridx
from taco_v1.container import _json as parse_v1_json
from tests.support.datasets import write_dataset

HUGE_NUMBER = b'{"format_version": "1.0", "files": {"a": {"start_byte": ' + b"7" * 5000 + b"}}}"
DEEP = b'{"format_version": "1.0", "files": ' + b"[" * 1100 + b"]" * 1100 + b"}"


@pytest.mark.parametrize("document", [HUGE_NUMBER, DEEP], ids=["5000-digit int", "1100 deep"])
@pytest.mark.parametrize(
    "parse",
    [
        lambda data: parse_caf_index(data, 10, "x.caf"),
        lambda data: parse_cozip_json(data, "x.taco3/COLLECTION.json"),
        lambda data: parse_v1_json(data, "x.taco/COLLECTION.json"),
    ],
    ids=["caf index", "cozip collection", "v1 collection"],
)
def test_plugin_json_is_bounded(parse: Callable[[bytes], object], document: bytes) -> None:
    # Found by held-out fuzzing: the CAF index raised ValueError (int digits limit)
    # and RecursionError; the other plugins parsed with json.loads too.
    with pytest.raises(TacoFormatError, match=r"nested at most|number of 5000"):
        parse(document)


def test_the_plugin_contract_exports_the_bounded_parser() -> None:
    assert loads_json('{"a": [1]}', "x") == {"a": [1]}
    with pytest.raises(TacoFormatError, match=f"nested at most {MAX_JSON_DEPTH}"):
        loads_json("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1), "x")


def test_caf_duplicate_keys_still_refused() -> None:
    data = b'{"format_version": "1.0", "files": {"a": {"start_byte": 0, "end_byte": 1}, '
    data += b'"a": {"start_byte": 0, "end_byte": 1}}}'
    with pytest.raises(TacoFormatError, match="appears twice"):
        parse_caf_index(data, 10, "x.caf")


def test_taridx_member_name_that_is_not_utf8(tmp_path: Path) -> None:
    # Found by held-out fuzzing: UnicodeEncodeError (surrogates) from member_table.
    payload = tmp_path / "p.bin"
    payload.write_bytes(b"pixels")
    shard = tmp_path / "train.tar"
    with tarfile.open(shard, "w", format=tarfile.GNU_FORMAT, errors="surrogateescape") as tar:
        tar.add(payload, arcname="caf\udce9.bin")  # the raw byte 0xE9: Latin-1, not UTF-8
    index = write_taridx(shard, tmp_path / "train.taridx")
    with pytest.raises(TacoFormatError, match=r"UTF-8 member name.*caf\\xe9\.bin"):
        taco_gdal.load(index)


def test_export_of_a_collection_with_a_lone_surrogate(tmp_path: Path) -> None:
    # Found by the folder_json fuzzer: a "\ud800" escape is valid JSON, loads, and made
    # export's COLLECTION.json encoding raise UnicodeEncodeError.
    folder = write_dataset(tmp_path, "flat", "folder")
    document = folder / "COLLECTION.json"
    text = document.read_text(encoding="utf-8")
    document.write_text(text.replace('"description": "', '"description": "\\ud800', 1))
    ds = taco_gdal.load(folder)
    with pytest.raises(TacoError, match="lone surrogate"):
        taco_gdal.export(ds, tmp_path / "out.tacozip", quiet=True)
