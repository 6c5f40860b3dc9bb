"""Requirement 6: the plugin contract is one public module, and the plugins use only it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import taco_gdal.containers as contract
from taco_gdal.read.opening.containers import registry

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"
CONTAINER_PLUGINS = ("taco_caf", "taco_taridx", "taco_derived", "taco_v1", "taco_cozip")


def _taco_gdal_imports(package: Path) -> set[str]:
    found: set[str] = set()
    for source in package.glob("*.py"):
        tree = ast.parse(source.read_text(), str(source))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                if node.module.split(".")[0] == "taco_gdal":
                    found.add(node.module)
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.split(".")[0] == "taco_gdal"}
    return found


@pytest.mark.parametrize("plugin", CONTAINER_PLUGINS)
def test_plugins_import_taco_gdal_only_through_the_contract(plugin: str) -> None:
    package = PLUGINS / plugin
    assert (package / "__init__.py").is_file(), f"missing plugin package {package}"
    assert _taco_gdal_imports(package) == {"taco_gdal.containers"}


def test_contract_exports_what_a_plugin_needs() -> None:
    needed = {
        "Container",
        "OpenedContainer",
        "Probe",
        "VsiRule",
        "atomic_file",
        "derived_collection",
        "register",
    }
    assert needed <= set(contract.__all__)
    for name in contract.__all__:
        assert getattr(contract, name) is not None, name


def test_builtins_are_registered_in_one_place() -> None:
    builtin = {c.format for c in registry.BUILTINS}
    from_entry_points = {c.format for c in registry._from_entry_points()}
    assert builtin == {"zip", "folder", "tacocat"}
    assert not builtin & from_entry_points
    assert {"caf", "taridx", "taco_v1", "taco3", "taco3cat", "cozip"} <= from_entry_points
