"""Folders whose ids do not sort in creation order: one ``__meta__`` read at load, not all.

The level1+ offset check (``read/opening/_repair.py``) guards against tacotoolbox's
lexicographic paste. A dataset whose level-1 folders are ``m0 .. m199`` (``m10``
sorts before ``m2``) looks suspicious to the ordering test; one folder's
``__meta__`` then settles it. Counted in the HTTP server's own log.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from taco_gdal.format.vsi import parse_subfile
from taco_gdal.read import TacoDataFrame, load
from taco_gdal.write import create
from tests.integration.remote._datasets import _taco
from tests.support.servers.remote import Remote

pytestmark = [pytest.mark.network, pytest.mark.timeout(300)]

ROOTS, MIDS, LEAVES = 2, 200, 2
PAYLOAD = 64
BLOCK = 16384


def _write(root: Path) -> tuple[Path, dict[tuple[int, int, int], bytes]]:
    from taco_gdal.model import Sample, Tortilla

    src = root / "src"
    src.mkdir(parents=True)
    truth: dict[tuple[int, int, int], bytes] = {}
    roots = []
    for i in range(ROOTS):
        mids = []
        for j in range(MIDS):
            leaves = []
            for k in range(LEAVES):
                payload = f"root {i} mid {j} leaf {k}".encode().ljust(PAYLOAD, b".")
                path = src / f"{i}_{j}_{k}.bin"
                path.write_bytes(payload)
                truth[(i, j, k)] = payload
                leaves.append(Sample(f"b{k}", path))
            mids.append(Sample(f"m{j}", Tortilla(leaves)))
        roots.append(Sample(f"t{i}", Tortilla(mids)))
    target = create(_taco(Tortilla(roots), "unsorted"), root / "unsorted.tacozip", quiet=True)
    return target[0], truth


def test_unsorted_folder_ids_load_with_one_meta_read(http_remote: Remote, tmp_path: Path) -> None:
    zip_path, truth = _write(tmp_path)
    url = http_remote.publish(zip_path)

    ds = load(url)

    with zipfile.ZipFile(zip_path) as archive:
        infos = archive.infolist()
    metas = sum(i.file_size for i in infos if i.filename.endswith("__meta__"))
    levels = sum(i.file_size for i in infos if not i.filename.startswith("DATA/"))
    # the header block, the level parquets (GDAL reads whole blocks) and one __meta__ block;
    # reading every __meta__ (they sit between the samples) would add about all of them
    budget = levels + 4 * BLOCK
    fetched = sum(r.bytes_sent for r in http_remote.log.records())
    assert budget < levels + metas / 2
    assert fetched <= budget, http_remote.log.describe()
    data = zip_path.read_bytes()
    for (i, j, k), payload in truth.items():
        mid = ds.read(i)
        assert isinstance(mid, TacoDataFrame)
        leaves = mid.read(j)
        assert isinstance(leaves, TacoDataFrame)
        vsi = leaves.read(k)
        assert isinstance(vsi, str)
        where = parse_subfile(vsi)
        assert data[where.offset : where.offset + where.size] == payload
