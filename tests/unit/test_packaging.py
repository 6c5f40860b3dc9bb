"""The conda environment and pyproject list the same runtime dependencies."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONDA_NAMES = {"python-duckdb": "duckdb"}


def _name(requirement: str) -> str:
    return re.split(r"[<>=!\[ ;]", requirement.strip(), maxsplit=1)[0].lower()


def test_conda_env_matches_pyproject_dependencies():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    wanted = {_name(r) for r in pyproject["project"]["dependencies"]}
    listed: set[str] = set()
    for line in (ROOT / "conda-env.yml").read_text().splitlines():
        item = line.strip()
        if item.startswith("- ") and not item.endswith(":"):
            name = _name(item[2:])
            listed.add(CONDA_NAMES.get(name, name))
    missing = wanted - listed
    assert not missing, f"conda-env.yml lacks runtime dependencies {sorted(missing)}"


def test_top_level_layout_exists():
    for name in (
        "pyproject.toml",
        "taco_gdal",
        "plugins",
        "tests",
        "notebooks",
        "conda-env.yml",
        "README.md",
        ".ci/run",
    ):
        assert (ROOT / name).exists(), name


DEVELOPER_TOOLS = {
    "pytest",
    "hypothesis",
    "mypy",
    "ruff",
    "moto",
    "flask",
    "boto3",
    "matplotlib",
    "tacotoolbox",
    "tacoreader",
    "tacozip",
    "torch",
    "dask",
    "distributed",
    "psutil",
}


def test_runtime_dependencies_hold_no_developer_tools():
    """`pip install taco_gdal` installs the runtime only; tools are extras."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    runtime = {_name(r) for r in pyproject["project"]["dependencies"]}
    assert not runtime & DEVELOPER_TOOLS, sorted(runtime & DEVELOPER_TOOLS)
    extras = pyproject["project"]["optional-dependencies"]
    assert {"test", "reference", "bench", "torch"} <= set(extras)


def test_runtime_requirements_are_the_runtime_dependencies():
    """requirements/runtime.txt (what `make demo` installs) names no developer tool."""
    lines = (ROOT / "requirements" / "runtime.txt").read_text().splitlines()
    names = {_name(line) for line in lines if line.strip() and not line.startswith("#")}
    assert not names & DEVELOPER_TOOLS, sorted(names & DEVELOPER_TOOLS)
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert {_name(r) for r in pyproject["project"]["dependencies"]} <= names
