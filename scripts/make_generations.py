#!/usr/bin/env python
"""Regenerate tests/generations/golden/: TACO v1 and v3 files written by their own tools.

taco_gdal writes TACO 2 only.  The other generations' fixtures are written by
the last tools that wrote them, each in a throwaway venv (never the project
venv), and read back there by the same generation's reader, whose view is
committed as JSON next to the files:

    v3  taco-eo 0.14.2 (writer and reader), cozip 2026.x, duckdb 1.5.5 + icu  -> golden/v3/
    v1  tacotoolbox 0.5.2 + pytortilla 0.5.1 (writers), tacoreader 0.6.5       -> golden/v1/

The GeoTIFFs (8x8 uint8, EPSG:4326, pixels from a seed) are made with rasterio
in the project venv and handed to the build scripts as files.  taco-eo's reader
sets DuckDB's TimeZone, which needs the ``icu`` extension: the script copies it
from the ``duckdb-extension-icu`` wheel into a private ``$HOME/.duckdb`` so the
reader runs offline.

Usage (from the repository root)::

    .venv/bin/python scripts/make_generations.py          # v3 and v1
    .venv/bin/python scripts/make_generations.py v3
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
GENERATIONS = ROOT / "tests" / "generations"
GOLDEN = GENERATIONS / "golden"
MANIFEST = GOLDEN / "manifest.json"
VENVS = pathlib.Path(os.environ.get("TACO_GENERATIONS_VENVS", "/tmp/taco_generations"))

TOOLCHAINS: dict[str, list[str]] = {
    "v3": [
        "taco-eo[writer]==0.14.2",
        "duckdb==1.5.5",
        "duckdb-extension-icu==1.5.5",
        "numpy",
    ],
    "v1": ["tacotoolbox==0.5.2", "pytortilla==0.5.1", "tacoreader==0.6.5"],
}
BUILD = {"v3": GENERATIONS / "_build_v3.py", "v1": GENERATIONS / "_build_v1.py"}


def venv(name: str) -> pathlib.Path:
    """The throwaway venv of a toolchain, created (or reused when its stamp matches)."""
    folder = VENVS / name
    stamp = folder / "requirements.txt"
    wanted = "\n".join(TOOLCHAINS[name]) + "\n"
    if not (stamp.is_file() and stamp.read_text() == wanted):
        shutil.rmtree(folder, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
        pip = [str(folder / "bin" / "pip"), "install", "-q", *TOOLCHAINS[name]]
        subprocess.run(pip, check=True)
        stamp.write_text(wanted)
    return folder / "bin" / "python"


def make_tifs(folder: pathlib.Path, count: int = 100) -> None:
    """8x8 uint8 GeoTIFFs named ``<seed>.tif``, each with different pixels."""
    import numpy as np
    import rasterio
    from rasterio.transform import from_origin

    folder.mkdir(parents=True, exist_ok=True)
    for seed in range(count):
        pixels = np.random.default_rng(seed).integers(0, 255, (1, 8, 8), dtype="uint8")
        profile = {
            "driver": "GTiff",
            "width": 8,
            "height": 8,
            "count": 1,
            "dtype": "uint8",
            "crs": "EPSG:4326",
            "transform": from_origin(-3 + seed * 0.01, 40, 0.001, 0.001),
        }
        with rasterio.open(folder / f"{seed}.tif", "w", **profile) as dst:
            dst.write(pixels)


def duckdb_home(python: pathlib.Path, home: pathlib.Path) -> None:
    """Copy the icu extension of the venv's wheel where DuckDB 1.5.5 autoloads it."""
    found = subprocess.run(
        [
            str(python),
            "-c",
            "import duckdb_extension_icu, os; print(os.path.dirname("
            "duckdb_extension_icu.__file__))",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    source = pathlib.Path(found) / "extensions" / "v1.5.5" / "icu.duckdb_extension"
    target = home / ".duckdb" / "extensions" / "v1.5.5" / "linux_amd64"
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy(source, target / source.name)


def sha256(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build(name: str, tifs: pathlib.Path, scratch: pathlib.Path) -> dict[str, object]:
    python = venv(name)
    out = scratch / name
    job = scratch / f"{name}.json"
    job.write_text(json.dumps({"tifs": str(tifs), "out": str(out)}))
    env = dict(os.environ)
    if name == "v3":
        home = scratch / "home"
        duckdb_home(python, home)
        env["HOME"] = str(home)
    subprocess.run([str(python), str(BUILD[name]), str(job)], check=True, env=env, cwd=scratch)
    target = GOLDEN / name
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(out, target)
    freeze = subprocess.run(
        [str(python), "-m", "pip", "freeze"], check=True, capture_output=True, text=True
    ).stdout.split()
    files = {
        str(path.relative_to(GOLDEN)): sha256(path)
        for path in sorted(target.rglob("*"))
        if path.is_file()
    }
    return {"tools": sorted(freeze), "files": files}


def main(argv: list[str]) -> None:
    names = argv or sorted(TOOLCHAINS)
    manifest = json.loads(MANIFEST.read_text()) if MANIFEST.is_file() else {"entries": {}}
    with tempfile.TemporaryDirectory(prefix="taco_generations_") as temp:
        scratch = pathlib.Path(temp)
        tifs = scratch / "tifs"
        make_tifs(tifs)
        for name in names:
            manifest["entries"][name] = build(name, tifs, scratch)
    MANIFEST.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
