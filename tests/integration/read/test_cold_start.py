"""Loading a local dataset and building ``.data`` import no GDAL and read local bytes with the OS.

``from osgeo import gdal`` is about 0.13 s of a cold start; the modules on the
load path take ``gdal`` from :mod:`taco_gdal._osgeo`, which imports it on first
use, and :class:`~taco_gdal.io.vsi.VSIFile` reads plain local paths with
``os.pread``.  The first sample opened imports GDAL as before.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from taco_gdal.errors import TacoIOError
from taco_gdal.io.vsi import VSIFile
from tests.support.datasets import write_dataset

_COLD = """
import sys
import taco_gdal
ds = taco_gdal.load(sys.argv[1])
frame = ds.data
assert len(frame) > 0
print("after .data:", "osgeo.gdal" in sys.modules)
with frame.open(0) as sample:
    assert sample.count >= 1
print("after open:", "osgeo.gdal" in sys.modules)
"""


@pytest.mark.parametrize("container", ["zip", "folder"])
def test_load_and_data_import_no_gdal(tmp_path: Path, container: str) -> None:
    path = write_dataset(tmp_path, "flat", container)
    done = subprocess.run(
        [sys.executable, "-c", _COLD, str(path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["after .data: False", "after open: True"], done.stdout


def test_local_reads_match_gdal_reads(tmp_path: Path) -> None:
    path = tmp_path / "bytes.bin"
    path.write_bytes(bytes(range(256)) * 40)
    ranges = [(250, 10), (0, 10240), (10235, 100), (20000, 5)]
    with VSIFile(str(path)) as local, VSIFile(f"/vsisubfile/0_10240,{path}") as gdal_file:
        assert local.size() == gdal_file.size() == 10240
        for offset, size in ranges:
            assert local.read_at(offset, size) == gdal_file.read_at(offset, size)
        assert local.read_at(10235, 100) == bytes(range(251, 256))  # short only at the end


def test_local_open_errors_name_the_path(tmp_path: Path) -> None:
    with pytest.raises(TacoIOError, match=r"missing\.tacozip"):
        VSIFile(str(tmp_path / "missing.tacozip"))
    with pytest.raises(TacoIOError, match="it is a folder"):
        VSIFile(str(tmp_path))
