"""Golden outputs: ``create()`` writes the same bytes and stores the same digests as before.

For each ``checksum`` (None, crc32c, xxh3, sha256) x shape (flat; FOLDER/FOLDER/FILE) x
container (ZIP, FOLDER), a dataset built here from fixed inputs (small GeoTIFFs written with
rasterio, small raw files, a sample held in memory, and members above the writer's
large-member threshold) is written and compared with ``golden_digests.json``: a SHA-256
over the output bytes (the ZIP file; for a FOLDER every file's relative path and bytes)
and one over the stored digest column.

The expectations were first recorded from the tree of commit 24d7938 (before the digest path
was rewritten on top of hashlib / xxhash / google-crc32c), and the rewritten writer matched
them byte for byte (commit 0f60ef1).  They were recorded again when COLLECTION.json changed on
purpose: its extent now contains every footprint, and its ``taco:field_schema`` declares the
digest column (issue 44); the data members and every stored digest stayed those of 24d7938.
To record, run this file as a script::

    PYTHONPATH=<tree>:<tree>/plugins python tests/integration/write/test_golden_digests.py

The only field normalised is the ZIP DOS modification time and date (every local and central
header's), which is the clock at write time; everything else must match byte for byte.
"""

from __future__ import annotations

import hashlib
import io
import json
import struct
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import rasterio
from rasterio.transform import from_origin

import taco_gdal
from taco_gdal.model import Sample, Taco, Tortilla

EXPECTED = Path(__file__).with_name("golden_digests.json")
CHECKSUMS = (None, "crc32c", "xxh3", "sha256")
SHAPES = ("flat", "nested")
CONTAINERS = ("zip", "folder")
MIB = 1024 * 1024
_LOCAL = struct.Struct("<4sHHHHH")
_CENTRAL = struct.Struct("<4sHHHHHH")


def _geotiff(path: Path, seed: int, size: int) -> None:
    data = (np.arange(size * size, dtype=np.uint16).reshape(size, size) * seed) % 4093
    profile = {
        "driver": "GTiff", "width": size, "height": size, "count": 1, "dtype": "uint16",
        "crs": "EPSG:32630", "transform": from_origin(400000 + seed * 100, 4500000, 10, 10),
    }  # fmt: skip
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(data, 1)


def _large(path: Path, seed: int, size: int) -> None:
    rng = np.random.default_rng(seed)
    path.write_bytes(rng.integers(0, 256, size, dtype=np.uint8).tobytes())


def build_inputs(folder: Path) -> dict[str, Path]:
    """The source files, identical on every run (fixed content, fixed seeds)."""
    folder.mkdir(parents=True, exist_ok=True)
    files: dict[str, Path] = {}
    for i in range(4):
        files[f"tif{i}"] = folder / f"tif{i}.tif"
        _geotiff(files[f"tif{i}"], seed=i + 1, size=16 + 8 * i)
    for i, content in enumerate((b"", b"abc", bytes(range(256)) * 300)):
        files[f"raw{i}"] = folder / f"raw{i}.bin"
        files[f"raw{i}"].write_bytes(content)
    files["big0"] = folder / "big0.bin"
    _large(files["big0"], seed=7, size=9 * MIB + 123)
    files["big1"] = folder / "big1.bin"
    _large(files["big1"], seed=8, size=17 * MIB + 5)
    return files


def _meta() -> dict[str, Any]:
    return {
        "id": "golden", "dataset_version": "1", "description": "golden digest test",
        "licenses": ["CC0-1.0"], "providers": [{"name": "t"}], "tasks": ["other"],
    }  # fmt: skip


def build_taco(files: dict[str, Path], shape: str) -> Taco:
    """``flat``: one level of FILE samples; ``nested``: FOLDER/FOLDER/FILE."""
    if shape == "flat":
        names = ["tif0", "raw0", "tif1", "big0", "raw1", "tif2", "big1", "raw2", "tif3"]
        samples = [Sample(f"s{i}", files[n]) for i, n in enumerate(names)]
        samples.append(Sample("inline", b"held in memory" * 100))
        return Taco(Tortilla(samples), **_meta())
    roots = []
    for r in range(2):
        middles = []
        for m in range(2):
            chosen = [f"tif{(r + m) % 4}", f"raw{(r * 2 + m) % 3}", "big0" if r == m else "raw1"]
            leaves = [Sample(f"f{k}", files[n]) for k, n in enumerate(chosen)]
            middles.append(Sample(f"m{m}", Tortilla(leaves)))
        roots.append(Sample(f"r{r}", Tortilla(middles)))
    return Taco(Tortilla(roots), **_meta())


def _zero_zip_times(data: bytearray) -> None:
    """Zero the DOS time and date of every local and central header (the write clock)."""
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        infos = archive.infolist()
        start = archive.start_dir  # type: ignore[attr-defined]
    for info in infos:
        sig = _LOCAL.unpack_from(data, info.header_offset)[0]
        assert sig == b"PK\x03\x04", f"no local header at {info.header_offset}"
        data[info.header_offset + 10 : info.header_offset + 14] = bytes(4)
    position = start
    for _ in infos:
        assert data[position : position + 4] == b"PK\x01\x02", f"no central header at {position}"
        data[position + 12 : position + 16] = bytes(4)
        n, m, k = struct.unpack_from("<HHH", data, position + 28)
        position += 46 + n + m + k


def output_hash(path: Path) -> str:
    """SHA-256 over the ZIP's bytes (times zeroed), or over a FOLDER's paths and bytes."""
    h = hashlib.sha256()
    if path.is_file():
        data = bytearray(path.read_bytes())
        _zero_zip_times(data)
        h.update(data)
        return h.hexdigest()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        relative = file.relative_to(path).as_posix().encode()
        content = file.read_bytes()
        h.update(struct.pack("<Q", len(relative)) + relative)
        h.update(struct.pack("<Q", len(content)) + content)
    return h.hexdigest()


def _level_tables(path: Path) -> list[pa.Table]:
    if path.is_dir():
        return [pq.read_table(p) for p in sorted(path.glob("METADATA/level*.parquet"))]
    tables = []
    with zipfile.ZipFile(path) as archive:
        for name in sorted(n for n in archive.namelist() if n.startswith("METADATA/level")):
            tables.append(pq.read_table(pa.BufferReader(archive.read(name))))
    return tables


def digest_column(path: Path) -> list[list[str | None]]:
    """The stored ``taco_gdal:checksum`` column of every level (empty list: no column)."""
    return [
        t.column("taco_gdal:checksum").to_pylist() if "taco_gdal:checksum" in t.column_names else []
        for t in _level_tables(path)
    ]


def case_name(checksum: str | None, shape: str, container: str) -> str:
    return f"{checksum or 'none'}-{shape}-{container}"


def run_case(
    files: dict[str, Path], out: Path, checksum: str | None, shape: str, container: str
) -> dict[str, Any]:
    """Write one case; its output hash, its digest column and that column's hash."""
    target = out / (
        case_name(checksum, shape, container) + (".tacozip" if container == "zip" else "")
    )
    taco = build_taco(files, shape)
    written = taco_gdal.create(taco, target, checksum=checksum, quiet=True)
    assert written == [target], written
    column = digest_column(target)
    encoded = json.dumps(column, sort_keys=True).encode()
    return {
        "output_sha256": output_hash(target),
        "digests_sha256": hashlib.sha256(encoded).hexdigest(),
        "digests": [v for level in column for v in level if v is not None][:4],
    }


def input_hashes(files: dict[str, Path]) -> dict[str, str]:
    return {name: hashlib.sha256(p.read_bytes()).hexdigest() for name, p in sorted(files.items())}


def test_golden_outputs(tmp_path: Path) -> None:
    """Every case's output bytes and stored digests equal the recorded ones."""
    expected = json.loads(EXPECTED.read_text())
    files = build_inputs(tmp_path / "in")
    assert input_hashes(files) == expected["inputs"], "the inputs changed (GDAL / numpy?)"
    out = tmp_path / "out"
    out.mkdir()
    found = {
        case_name(c, s, k): run_case(files, out, c, s, k)
        for c in CHECKSUMS
        for s in SHAPES
        for k in CONTAINERS
    }
    assert found == expected["cases"]


def test_digest_cases_store_digests() -> None:
    """The recorded expectations themselves cover every algorithm with stored values."""
    cases = json.loads(EXPECTED.read_text())["cases"]
    for algorithm in ("crc32c", "xxh3", "sha256"):
        for shape in SHAPES:
            for container in CONTAINERS:
                stored = cases[case_name(algorithm, shape, container)]["digests"]
                assert stored and all(v.startswith(f"{algorithm}:") for v in stored)
    assert all(not cases[case_name(None, s, k)]["digests"] for s in SHAPES for k in CONTAINERS)


def _record(folder: Path) -> None:
    """Write ``golden_digests.json`` from the ``taco_gdal`` on the path."""
    files = build_inputs(folder / "in")
    out = folder / "out"
    out.mkdir()
    cases = {
        case_name(c, s, k): run_case(files, out, c, s, k)
        for c in CHECKSUMS
        for s in SHAPES
        for k in CONTAINERS
    }
    document = {"made_from": "24d7938", "inputs": input_hashes(files), "cases": cases}
    EXPECTED.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    import tempfile

    print("recording with", taco_gdal.__file__, file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        _record(Path(tmp))
