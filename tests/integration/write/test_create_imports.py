"""What a first ``create()`` in a fresh process imports: nothing it does not use.

A module imported inside ``create()`` is paid by every ``taco create`` and every
first write of a script: ``numpy.ma``, which ``np.unique`` imports on its first
call, took 7.5 ms of a 0.26 s write of 10k samples.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

_CHILD = r"""
import json, sys
from pathlib import Path
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.write import create

folder = Path(sys.argv[1])
samples = []
for i in range(50):
    (folder / f"s{i:02d}").write_bytes(bytes([i]) * (100 + i))
    samples.append(Sample(f"s{i:02d}", folder / f"s{i:02d}"))
taco = Taco(
    Tortilla(samples), id="imports", dataset_version="1", description="d",
    licenses=["CC0-1.0"], providers=[{"name": "tests"}], tasks=["other"],
)
before = set(sys.modules)
create(taco, folder / "out.tacozip", quiet=True, checksum=sys.argv[2] or None)
print(json.dumps(sorted(set(sys.modules) - before)))
"""


@pytest.mark.parametrize("checksum", ["", "sha256", "crc32c"])
def test_a_first_create_of_a_flat_dataset_does_not_import_numpy_ma(
    tmp_path: Path, checksum: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(tmp_path), checksum],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    imported = json.loads(done.stdout.strip().splitlines()[-1])
    assert (tmp_path / "out.tacozip").stat().st_size > 0
    assert not [name for name in imported if name == "numpy.ma" or name.startswith("numpy.ma.")]
