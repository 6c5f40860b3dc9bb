"""Container plug points: entry points, registration, the Probe."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest

import taco_gdal.read as reader
from taco_gdal.read.opening.containers import registry
from taco_gdal.read.opening.containers.base import Container, Probe
from taco_gdal.read.opening.containers.folder import FolderContainer
from taco_gdal.read.opening.containers.tacocat import TacoCatContainer
from taco_gdal.read.opening.containers.zip import ZipContainer
from tests.integration.read.conftest import RefDataset


def test_builtins_come_from_the_registry_and_plugins_from_entry_points() -> None:
    loaded = registry._from_entry_points()
    assert not {ZipContainer, FolderContainer, TacoCatContainer} & set(loaded)
    builtin = [c.format for c in registry.available() if c in registry.BUILTINS]
    assert builtin == ["tacocat", "zip", "folder"]
    for container in loaded:
        assert isinstance(container, type)


@dataclass(frozen=True)
class RenamedZip(ZipContainer):
    """A plugin: TACO ZIPs that use the suffix ``.mytaco``."""

    format: ClassVar[str] = "mytaco"
    priority: ClassVar[int] = 5

    @classmethod
    def claims(cls, probe: Probe) -> bool:
        return probe.name.endswith(".mytaco")


def test_registered_container_is_used(
    reference: Callable[[str, str], RefDataset], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(registry, "_EXTRA", {})
    plugin: type[Container] = RenamedZip
    registry.register(plugin)
    target = tmp_path / "data.mytaco"
    target.write_bytes(reference("flat", "zip").path.read_bytes())
    ds = reader.load(target)
    assert ds.format == "mytaco"
    assert ds.data["internal:gdal_vsi"].str.endswith(f",{target}").all()


def test_probe_reads_once(reference: Callable[[str, str], RefDataset]) -> None:
    path = reference("flat", "zip").path
    probe = Probe(str(path), str(path))
    assert probe.name == path.name
    assert probe.stat() == (True, False)
    first = probe.head()
    assert first[:4] == b"PK\x03\x04" and probe.head() is first
    assert not probe.exists("COLLECTION.json")
