"""Fixtures of the conformance suite (reference tools <-> taco_gdal), and its result matrix.

* Every test here carries the ``reference`` marker.
* ``install_spatial_extension`` (session, autouse) puts DuckDB's spatial
  extension where tacoreader's ``INSTALL spatial`` finds it offline.
* ``reference_built`` / ``taco_gdal_built`` write a shape into a container
  once per session with tacotoolbox 0.26.9 / taco_gdal and return the path to load.
* Each parametrized test names the matrix cells it covers (``Case.cells``);
  with ``TACO_CONFORMANCE_MATRIX=<file.md>`` set, the session writes the
  shape x container x direction matrix of actual outcomes to that file
  (``scripts/conformance_matrix.py`` does this and updates docs/compatibility.md).
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.conformance import _env, _matrix, shapes

HERE = pathlib.Path(__file__).resolve().parent
GOLDEN = HERE / "golden"
BuildFn = Callable[..., list[pathlib.Path]]


@dataclass(frozen=True)
class Case:
    """One parametrization: a shape in a container, and the matrix cells it covers."""

    shape: str
    container: str
    cells: tuple[tuple[str, str, str, str], ...] = field(default=())
    """(matrix row, container, direction, source) tuples."""
    name: str = ""
    """Test id; ``{shape}-{container}`` when empty."""

    def __str__(self) -> str:
        return self.name or f"{self.shape}-{self.container}"


REFERENCE_TOOL_WARNINGS = (
    # tacoreader 2.4.21 calls DuckDB's fetch_arrow_table(), deprecated in duckdb 1.5;
    # raised as an error inside DuckDB's C code it surfaces as a SystemError.
    "ignore:fetch_arrow_table\\(\\) is deprecated:DeprecationWarning",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in pathlib.Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.reference)
            for spec in REFERENCE_TOOL_WARNINGS:
                item.add_marker(pytest.mark.filterwarnings(spec))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    callspec = getattr(item, "callspec", None)
    case = callspec.params.get("case") if callspec is not None else None
    if isinstance(case, Case) and (report.when == "call" or report.failed):
        for cell in case.cells:
            _matrix.record(cell, item.nodeid, report.outcome)


def pytest_sessionfinish(session: pytest.Session) -> None:
    target = os.environ.get("TACO_CONFORMANCE_MATRIX")
    if target:
        pathlib.Path(target).write_text(_matrix.render(), encoding="utf-8")


@pytest.fixture(scope="session", autouse=True)
def spatial_extension() -> pathlib.Path:
    """DuckDB spatial extension installed for offline ``INSTALL spatial; LOAD spatial``."""
    return _env.install_spatial_extension()


@pytest.fixture(scope="session")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    return tmp_path_factory.mktemp("conformance")


@pytest.fixture(scope="session")
def files_root(workdir: pathlib.Path) -> pathlib.Path:
    """The GeoTIFFs of every shape, made with rasterio."""
    root = workdir / "files"
    for name in shapes.SHAPES:
        shapes.write_files(shapes.shape(name), root)
    return root


def load_target(output: pathlib.Path, container: str) -> pathlib.Path:
    """What a reader loads for a dataset written to ``output``."""
    return output.parent / ".tacocat" if container == "tacocat" else output


class Built:
    """Writes (shape, container) once per session with one writer."""

    def __init__(self, build: BuildFn, root: pathlib.Path, files: pathlib.Path) -> None:
        self._build = build
        self._root = root
        self._files = files
        self._done: dict[tuple[str, str], pathlib.Path] = {}

    def __call__(self, shape: str, container: str) -> pathlib.Path:
        key = (shape, container)
        if key not in self._done:
            folder = self._root / f"{shape}-{container}"
            folder.mkdir(parents=True)
            name = shape if container == "folder" else f"{shape}.tacozip"
            split = shapes.SPLIT_SIZES[shape] if container == "tacocat" else None
            self._build(shapes.shape(shape), self._files, folder / name, container, split)
            self._done[key] = load_target(folder / name, container)
        return self._done[key]


@pytest.fixture(scope="session")
def tacotoolbox_module() -> Any:
    """tacotoolbox, or a skip when the reference tools are not installed at all."""
    return pytest.importorskip("tacotoolbox", reason="reference tools not installed")


@pytest.fixture(scope="session")
def tacoreader_module() -> Any:
    """tacoreader, or a skip when the reference tools are not installed at all."""
    return pytest.importorskip("tacoreader", reason="reference tools not installed")


@pytest.fixture(scope="session")
def reference_built(
    tacotoolbox_module: Any, workdir: pathlib.Path, files_root: pathlib.Path
) -> Built:
    """``(shape, container) -> path`` written by tacotoolbox (the installed 0.26.9)."""
    from tests.conformance import _refbuild

    return Built(_refbuild.build, workdir / "reference", files_root)


@pytest.fixture(scope="session")
def taco_gdal_built(workdir: pathlib.Path, files_root: pathlib.Path) -> Built:
    """``(shape, container) -> path`` written by taco_gdal."""
    from tests.conformance import _tgbuild

    return Built(_tgbuild.build, workdir / "taco_gdal", files_root)


@pytest.fixture(scope="session")
def tacoreader_view(tacoreader_module: Any) -> Generator[Callable[..., dict[str, Any]]]:
    """``(path, filters) -> view``: what tacoreader shows of a dataset (cached per path)."""
    from tests.conformance import _refdump

    cache: dict[tuple[str, bool], dict[str, Any]] = {}

    def view(path: pathlib.Path, filters: list[dict[str, Any]], keep_paths: bool = False) -> Any:
        key = (str(path), keep_paths)
        if key not in cache:
            ds = tacoreader_module.load(str(path))
            try:
                cache[key] = _refdump.dump(ds, filters=filters, keep_paths=keep_paths)
            finally:
                ds.close()
        return cache[key]

    yield view
    cache.clear()
