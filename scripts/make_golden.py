#!/usr/bin/env python
"""Regenerate the golden datasets of tests/conformance/golden/ with the reference tools.

Each golden dataset is written by one tacotoolbox version and read back by the
tacoreader version of its time; what that reader shows (ids, types, metadata
values, SHA-256 of every sample's bytes, filter results) is recorded in
``golden/manifest.json``.  The conformance suite then checks that taco_gdal
reads every golden dataset exactly as the manifest says, without needing the
old tools (or PyPI).

Old versions run in throwaway venvs under ``/tmp/taco_golden/`` (created on
demand; ``--venvs`` to move them)::

    tacotoolbox 0.18.0 + tacoreader 2.0.0c12 + jinja2   binary __TACOCAT__, no internal:current_id
    tacotoolbox 0.20.7 + tacoreader 2.4.12              .tacocat/ folder, no internal:current_id
    tacotoolbox 0.26.1 + tacoreader 2.4.12              __TACOPAD__ padding rows
    tacotoolbox 0.26.9 + tacoreader 2.4.21              the project venv (current format)

Every venv also gets ``duckdb==1.5.5``, the version whose spatial extension the
project venv ships (copied to ~/.duckdb so the readers' filters work offline).
The GeoTIFFs are made with rasterio in the project venv and handed over as files.

Usage::

    .venv/bin/python -m scripts.make_golden            # all entries
    .venv/bin/python -m scripts.make_golden v0207_two_zip v0269_flat_zip
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import Any

from tests.conformance import _env, shapes
from tests.support.zipinfo import misplaced_rows

ROOT = pathlib.Path(__file__).resolve().parents[1]

CONFORMANCE = ROOT / "tests" / "conformance"
GOLDEN = CONFORMANCE / "golden"
MANIFEST = GOLDEN / "manifest.json"
BUILD_SCRIPT = CONFORMANCE / "_refbuild.py"
DUMP_SCRIPT = CONFORMANCE / "_refdump.py"

TOOLCHAINS: dict[str, list[str]] = {
    # tacotoolbox 0.18 ... 0.26.0 raise NameError on import without jinja2 and markdown.
    "0.18.0": [
        "tacotoolbox==0.18.0",
        "tacoreader==2.0.0c12",
        "jinja2",
        "markdown",
        "duckdb==1.5.5",
    ],
    "0.20.7": ["tacotoolbox==0.20.7", "tacoreader==2.4.12", "jinja2", "markdown", "duckdb==1.5.5"],
    "0.26.1": ["tacotoolbox==0.26.1", "tacoreader==2.4.12", "duckdb==1.5.5"],
    "0.26.9": [],  # the project venv: tacotoolbox 0.26.9 + tacoreader 2.4.21
}


@dataclass(frozen=True)
class Entry:
    """One golden dataset: which tool wrote which shape into which container."""

    name: str
    tool: str
    shape: str
    container: str
    split_size: str | None = None
    note: str = ""

    def load_path(self) -> str:
        """Path (relative to golden/) a reader loads."""
        if self.container == "folder":
            return f"{self.name}/{self.shape}"
        if self.container == "zip":
            return f"{self.name}/{self.shape}.tacozip"
        if self.tool == "0.18.0":
            return f"{self.name}/__TACOCAT__"
        return f"{self.name}/.tacocat"


ENTRIES: tuple[Entry, ...] = (
    Entry(
        "v0180_two_bincat",
        "0.18.0",
        "two",
        "tacocat",
        "2KB",
        "binary __TACOCAT__ over 3 ZIP parts; levels lack internal:current_id",
    ),
    Entry("v0207_two_zip", "0.20.7", "two", "zip", None, "no internal:current_id"),
    Entry("v0207_three_zip", "0.20.7", "three", "zip", None, "no internal:current_id"),
    Entry("v0207_two_folder", "0.20.7", "two", "folder", None, "no internal:current_id"),
    Entry(
        "v0207_two_tacocat",
        "0.20.7",
        "two",
        "tacocat",
        "2KB",
        ".tacocat/ folder; no internal:current_id",
    ),
    Entry("v0261_padded_zip", "0.26.1", "padded", "zip", None, "__TACOPAD__0 rows (0-byte)"),
    Entry("v0261_padded_folder", "0.26.1", "padded", "folder", None, "__TACOPAD__0 rows"),
    Entry("v0261_padded_tacocat", "0.26.1", "padded", "tacocat", "2KB", "__TACOPAD__0 rows"),
    Entry(
        "v0269_misplaced_zip",
        "0.26.9",
        "misplaced",
        "zip",
        None,
        "folder ids t2,t10,b,a: METADATA/level1.parquet offsets point at other folders",
    ),
    Entry("v0269_flat_zip", "0.26.9", "flat", "zip"),
    Entry("v0269_two_tacocat", "0.26.9", "two", "tacocat", "2KB"),
    Entry("v0269_three_folder", "0.26.9", "three", "folder"),
)


def _run(cmd: list[str], **kwargs: Any) -> str:
    done = subprocess.run(cmd, check=False, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        raise SystemExit(
            f"command failed ({done.returncode}): {' '.join(cmd)}\n"
            f"--- stdout\n{done.stdout[-4000:]}\n--- stderr\n{done.stderr[-4000:]}"
        )
    return str(done.stdout)


def venv_python(tool: str, venvs: pathlib.Path) -> pathlib.Path:
    """Interpreter of the toolchain ``tool``, creating its venv when missing."""
    requirements = TOOLCHAINS[tool]
    if not requirements:
        return pathlib.Path(sys.executable)
    venv = venvs / f"tacotoolbox-{tool}"
    python = venv / "bin" / "python"
    stamp = venv / "requirements.txt"
    if python.exists() and stamp.exists() and stamp.read_text() == "\n".join(requirements):
        return python
    shutil.rmtree(venv, ignore_errors=True)
    print(f"creating {venv} with {' '.join(requirements)}", flush=True)
    _run([sys.executable, "-m", "venv", str(venv)])
    _run([str(python), "-m", "pip", "install", "-q", *requirements])
    stamp.write_text("\n".join(requirements))
    return python


def versions(python: pathlib.Path) -> dict[str, str]:
    """Installed versions of the reference packages in ``python``'s environment."""
    packages = ("tacotoolbox", "tacoreader", "tacozip", "duckdb", "pyarrow")
    code = (
        "import json; from importlib.metadata import version as v;"
        f"print(json.dumps({{p: v(p) for p in {packages!r}}}))"
    )
    return dict(json.loads(_run([str(python), "-c", code])))


def _sha256(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def generate(entry: Entry, python: pathlib.Path, work: pathlib.Path) -> dict[str, Any]:
    """Write ``entry`` into golden/, read it back with the matching reader, return its record."""
    spec = shapes.shape(entry.shape)
    files = shapes.write_files(spec, work / "files")
    build_dir = work / "build" / entry.name
    build_dir.mkdir(parents=True)
    output = build_dir / (entry.shape if entry.container == "folder" else f"{entry.shape}.tacozip")
    job = {
        "spec": spec,
        "files_root": str(files),
        "output": str(output),
        "container": entry.container,
        "split_size": entry.split_size,
    }
    job_file = work / f"{entry.name}.job.json"
    job_file.write_text(json.dumps(job, ensure_ascii=False), encoding="utf-8")
    _run([str(python), str(BUILD_SCRIPT), str(job_file)], cwd=work)

    target = GOLDEN / entry.name
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(build_dir, target)

    filters_file = work / f"{entry.name}.filters.json"
    filters_file.write_text(json.dumps(shapes.FILTERS.get(entry.shape, [])), encoding="utf-8")
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    out = _run(
        [str(python), str(DUMP_SCRIPT), entry.load_path(), str(filters_file)], cwd=GOLDEN, env=env
    )
    view = json.loads(out)
    record: dict[str, Any] = {
        "tool": versions(python),
        "shape": entry.shape,
        "container": entry.container,
        "split_size": entry.split_size,
        "note": entry.note,
        "load": entry.load_path(),
        "files": {
            str(p.relative_to(GOLDEN)): _sha256(p) for p in sorted(target.rglob("*")) if p.is_file()
        },
        "view": view,
    }
    if entry.shape == "misplaced":
        record["misplaced_level1_rows"] = misplaced_rows(GOLDEN / entry.load_path(), 1)
    return record


def crosscheck_binary_tacocat(venvs: pathlib.Path) -> bool:
    """Does tacoreader 2.0.0c12 read taco_gdal's ``__TACOCAT__`` as 2.4.21 reads ``.tacocat/``?

    taco_gdal writes both forms side by side; tacoreader 2.4.21 reads only the
    folder, so the live suite cannot check the binary one.  This runs the last
    reader of the binary form, in its venv, and compares the two trees (ids,
    types, values, sample bytes).
    """
    from tests.conformance import _tgbuild

    python = venv_python("0.18.0", venvs)
    with tempfile.TemporaryDirectory(prefix="taco_crosscheck_") as tmp:
        work = pathlib.Path(tmp)
        spec = shapes.shape("two")
        files = shapes.write_files(spec, work / "files")
        (work / "out").mkdir()
        _tgbuild.build(spec, files, work / "out" / "two.tacozip", "tacocat", "2KB")
        (work / "none.json").write_text("[]", encoding="utf-8")
        trees = [
            json.loads(_run([str(py), str(DUMP_SCRIPT), target, "none.json"], cwd=work))["tree"]
            for py, target in ((python, "out/__TACOCAT__"), (sys.executable, "out/.tacocat"))
        ]
    same = bool(trees[0] == trees[1])
    print(f"tacoreader 2.0.0c12 on taco_gdal's __TACOCAT__ == 2.4.21 on its .tacocat/: {same}")
    return same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="entries to regenerate (default: all)")
    parser.add_argument("--venvs", type=pathlib.Path, default=pathlib.Path("/tmp/taco_golden"))
    parser.add_argument(
        "--crosscheck",
        action="store_true",
        help="only check that tacoreader 2.0.0c12 reads taco_gdal's binary __TACOCAT__",
    )
    args = parser.parse_args(argv)
    if args.crosscheck:
        _env.install_spatial_extension()
        return 0 if crosscheck_binary_tacocat(args.venvs) else 1
    known = {e.name: e for e in ENTRIES}
    unknown = sorted(set(args.names) - set(known))
    if unknown:
        parser.error(f"unknown entries {unknown}; known: {sorted(known)}")
    chosen = [known[n] for n in args.names] if args.names else list(ENTRIES)

    _env.install_spatial_extension()
    manifest: dict[str, Any] = {"entries": {}}
    if MANIFEST.exists():
        manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    manifest["generated_by"] = "scripts/make_golden.py"
    args.venvs.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="taco_golden_") as tmp:
        for entry in chosen:
            python = venv_python(entry.tool, args.venvs)
            print(f"{entry.name}: tacotoolbox {entry.tool} ({python})", flush=True)
            manifest["entries"][entry.name] = generate(entry, python, pathlib.Path(tmp))
    manifest["entries"] = {k: manifest["entries"][k] for k in sorted(manifest["entries"])}
    MANIFEST.write_text(json.dumps(manifest, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    total = sum(p.stat().st_size for p in GOLDEN.rglob("*") if p.is_file())
    print(f"wrote {MANIFEST} ({len(manifest['entries'])} entries); golden/ is {total} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
