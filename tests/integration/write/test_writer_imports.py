"""What a write imports: none of pandas, pyproj or shapely (together about 50 MB of RSS),
nor tqdm when the progress bar is off (it imports ``importlib.metadata`` and ``email``).

pyarrow imports pandas the first time ``pa.array``, ``pa.scalar`` or
``Array.to_numpy`` runs; the writer builds its columns from Arrow buffers
instead.  Checked in a fresh interpreter, since the test process has them all.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

_SCRIPT = r"""
import json, sys
from pathlib import Path
import numpy as np
import pyarrow as pa
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.write import create

folder = Path(sys.argv[1])
paths = []
for i in range(12):
    path = folder / f"f{i}"
    path.write_bytes(bytes([i]) * 16)
    paths.append(str(path))
collection = dict(id="imports", dataset_version="1", description="d", licenses=["CC0-1.0"],
                  providers=[{"name": "tests"}], tasks=["other"])
roots = []
for r in range(3):
    leaves = [Sample(f"b{m}", paths[r * 4 + m], cloud=float(m), n=m, split="x", empty=None)
              for m in range(4)]
    roots.append(Sample(f"t{r}", Tortilla(leaves), cloud=0.5))
create(Taco(Tortilla(roots), **collection), folder / "tree.tacozip", quiet=True)
create(Taco(Tortilla(roots), **collection), folder / "tree_folder", quiet=True, checksum="xxh3")
cloud = pa.Array.from_buffers(pa.float64(), 12, [None, pa.py_buffer(np.arange(12.0))])
flat = Tortilla.from_columns([f"s{i}" for i in range(12)], paths,
                             pa.Table.from_arrays([cloud], names=["cloud"]))
create(Taco(flat, **collection), folder / "flat.tacozip", quiet=True, checksum="crc32c")
print(json.dumps(sorted(m for m in ("pandas", "pyproj", "shapely", "tqdm") if m in sys.modules)))
"""


def test_create_imports_no_pandas_pyproj_shapely_or_tqdm(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []
    assert (tmp_path / "tree.tacozip").stat().st_size > 0
    assert (tmp_path / "flat.tacozip").stat().st_size > 0
    assert (tmp_path / "tree_folder" / "COLLECTION.json").is_file()
