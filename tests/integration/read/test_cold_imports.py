"""A cold ``load()`` decodes the metadata while pandas and geopandas are imported beside it.

The overlap (:mod:`taco_gdal.read.opening._preload`) holds only if the parser itself
never imports pandas: a single ``schema.empty_table()`` or ``pa.array`` of a
Python value on the parse path imports it through pyarrow, and the decode
then waits for the import instead of running beside it.  Each case runs in a
fresh interpreter, where nothing is imported yet.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.datasets import write_dataset

_FRAME_MODULES = ("pandas", "geopandas")

_PARSE_ONLY = """
import json, sys, traceback
from taco_gdal.read.opening.containers import registry
from taco_gdal.read.opening.containers.base import Probe
from taco_gdal.format.vsi import to_vsi

first_import = []

class Watch:  # records who imports pandas first, imports nothing itself
    def find_spec(self, name, path=None, target=None):
        if name == "pandas" and not first_import:
            first_import.append([frame.name for frame in traceback.extract_stack()])
        return None

sys.meta_path.insert(0, Watch())
path = sys.argv[1]
probe = Probe(to_vsi(path), path)
container = registry.detect(probe).open(probe, None)
print(json.dumps({"rows": container.levels[0].num_rows, "stack": (first_import or [[]])[0]}))
"""
"""Opens a container in a fresh interpreter; prints the call stack of the first pandas import."""

_DECODE = {"parse_metadata_deferring", "parse_level_deferring", "parse_level", "decode_parquet"}
"""The functions that decode level Parquet (:mod:`taco_gdal.read.opening.containers._parse`)."""

_LOAD = """
import json, os, sys, threading
threads = threading.active_count()
import taco_gdal
from tests.support.forking import in_forked_child
ds = taco_gdal.load(sys.argv[1])
after = sorted(t.name for t in threading.enumerate())
child = in_forked_child(lambda: str(len(ds.data)))
print(json.dumps({
    "threads_before": threads,
    "threads_after": after,
    "imported": [m for m in ("pandas", "geopandas") if m in sys.modules],
    "writer": [m for m in ("taco_gdal.write", "taco_gdal.model") if m in sys.modules],
    "rows_in_child": child,
    "rows": len(ds.data),
}))
"""


def _run(script: str, path: Path) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", script, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=Path(__file__).resolve().parents[3],
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize("container", ["zip", "folder", "tacocat"])
def test_decoding_the_metadata_imports_no_pandas(tmp_path: Path, container: str) -> None:
    path = write_dataset(tmp_path, "2level", container)  # type: ignore[arg-type]
    result = _run(_PARSE_ONLY, path)
    assert result["rows"] == 3
    stack = result["stack"]
    assert isinstance(stack, list)
    decoding = _DECODE.intersection(stack)
    assert not decoding, f"the level decode ({decoding}) imported pandas: load() cannot overlap"


def test_load_imports_the_frame_modules_and_leaves_no_thread(tmp_path: Path) -> None:
    path = write_dataset(tmp_path, "flat", "zip")
    result = _run(_LOAD, path)
    assert result["imported"] == list(_FRAME_MODULES)
    assert result["writer"] == []  # the plugins' contract imports the writer only to write
    assert result["threads_after"] == ["MainThread"]  # joined before load() returned
    assert result["threads_before"] == 1
    assert result["rows_in_child"] == "3"  # a fork right after load() reads the dataset
    assert result["rows"] == 3
