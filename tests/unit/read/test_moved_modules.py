"""Module paths that moved when read/ was laid out by concept still import, and warn."""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable
from typing import Any

import pytest

import taco_gdal.read
from taco_gdal.read.opening.containers import base
from taco_gdal.read.query import prepared, sql

MOVED = {
    "taco_gdal.read.hub": "taco_gdal.read.opening.hub",
    "taco_gdal.read.state": "taco_gdal.read.query.state",
    "taco_gdal.read.filters": "taco_gdal.read.query.filters",
    "taco_gdal.read.timerange": "taco_gdal.read.query.timerange",
    "taco_gdal.read.stats": "taco_gdal.read.query.stats",
    "taco_gdal.read.levels": "taco_gdal.read.query.prepared",
    "taco_gdal.read.dataframe": "taco_gdal.read.frames.dataframe",
    "taco_gdal.read.navigation": "taco_gdal.read.frames.navigation",
    "taco_gdal.read.containers.base": "taco_gdal.read.opening.containers.base",
    "taco_gdal.read.containers.registry": "taco_gdal.read.opening.containers.registry",
    "taco_gdal.read.containers.zip": "taco_gdal.read.opening.containers.zip",
    "taco_gdal.read.containers.folder": "taco_gdal.read.opening.containers.folder",
    "taco_gdal.read.containers.tacocat": "taco_gdal.read.opening.containers.tacocat",
}


def _forget(monkeypatch: pytest.MonkeyPatch, old: str) -> None:
    """Import ``old`` afresh: out of sys.modules and off its parent package."""
    names = [old] if old.count(".") == 2 else [old, old.rsplit(".", 1)[0]]
    for name in names:
        monkeypatch.delitem(sys.modules, name, raising=False)
        parent, _, child = name.rpartition(".")
        if parent in sys.modules:
            monkeypatch.delattr(sys.modules[parent], child, raising=False)


def _warned(action: Callable[[], Any]) -> tuple[Any, list[str]]:
    """What ``action`` returns, and the DeprecationWarnings it emitted."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = action()
    return value, [str(w.message) for w in caught if w.category is DeprecationWarning]


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_a_moved_module_is_the_new_one_and_warns(
    monkeypatch: pytest.MonkeyPatch, old: str, new: str
) -> None:
    _forget(monkeypatch, old)
    module, messages = _warned(lambda: importlib.import_module(old))
    assert module is importlib.import_module(new)
    assert f"{old} is deprecated: it moved to {new}; import it from there" in messages


def test_old_names_import_from_the_old_path_with_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    _forget(monkeypatch, "taco_gdal.read.containers.base")
    rule, messages = _warned(lambda: importlib.import_module("taco_gdal.read.containers.base"))
    assert rule.VsiRule is base.VsiRule
    assert any(m.startswith("taco_gdal.read.containers is deprecated") for m in messages)
    quote, messages = _warned(lambda: taco_gdal.read.query.quote_ident)
    assert quote is sql.quote_ident
    assert messages == [
        "taco_gdal.read.query.quote_ident is deprecated: it moved to "
        "taco_gdal.read.query.sql.quote_ident; import it from there"
    ]
    polars, messages = _warned(lambda: taco_gdal.read.frames.to_polars)
    assert callable(polars) and len(messages) == 1
    _forget(monkeypatch, "taco_gdal.read.levels")
    levels, messages = _warned(lambda: importlib.import_module("taco_gdal.read.levels"))
    assert levels.prepare_levels is prepared.prepare_levels and len(messages) == 1
