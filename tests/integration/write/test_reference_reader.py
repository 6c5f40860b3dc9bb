"""Files written by taco_gdal load in the reference reader (tacoreader 2.4.21).

Every sample is reached through tacoreader's navigation (``read()``, which uses
the ``__meta__`` files) and through its flat SQL views (which use the
consolidated levels), and the bytes GDAL reads at those paths equal the source.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from taco_gdal.format import names
from taco_gdal.io.vsi import read_all
from taco_gdal.model.package import MetadataPackage
from taco_gdal.write import create
from tests.support.datasets import SHAPES, Shape, make_taco

tacoreader = pytest.importorskip("tacoreader")

pytestmark = [
    pytest.mark.reference,
    # tacoreader 2.4.21 calls duckdb's deprecated fetch_arrow_table()
    pytest.mark.filterwarnings("ignore:fetch_arrow_table:DeprecationWarning"),
]


def _sources(package: MetadataPackage) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for level, table in enumerate(package.levels):
        paths = table.column(names.PATH).to_pylist()
        rels = (
            table.column(names.ID).to_pylist()
            if level == 0
            else table.column(names.RELATIVE_PATH).to_pylist()
        )
        for rel, kind, path in zip(rels, table.column(names.TYPE).to_pylist(), paths, strict=True):
            if kind == names.FILE:
                out[rel] = path
    return out


def _walk(frame: Any, prefix: str, sources: dict[str, str | None], seen: list[str]) -> None:
    ids = frame.to_arrow().column("id").to_pylist()
    for index, sample_id in enumerate(ids):
        result = frame.read(index)
        if isinstance(result, str):
            rel = prefix + sample_id
            source = sources[rel]
            if source is not None:
                assert read_all(result) == Path(source).read_bytes(), rel
            seen.append(rel)
        else:
            _walk(result, f"{prefix}{sample_id}/", sources, seen)


@pytest.mark.parametrize("container", ["zip", "folder"])
@pytest.mark.parametrize("shape", SHAPES)
def test_tacoreader_navigates_every_sample(tmp_path: Path, shape: Shape, container: str) -> None:
    taco = make_taco(tmp_path, shape)
    package = taco.metadata()
    out = tmp_path / ("ds.tacozip" if container == "zip" else "ds")
    create(taco, out, quiet=True)
    dataset = tacoreader.load(str(out))
    sources = _sources(package)
    seen: list[str] = []
    _walk(dataset.data, "", sources, seen)
    expected = {k for k in sources if names.PADDING_PREFIX not in k}
    assert expected <= set(seen)


@pytest.mark.parametrize("shape", ["2level", "3level"])
def test_tacoreader_flat_views_use_right_offsets(tmp_path: Path, shape: Shape) -> None:
    taco = make_taco(tmp_path, shape)
    package = taco.metadata()
    out = create(taco, tmp_path / "ds.tacozip", quiet=True)[0]
    dataset = tacoreader.load(str(out))
    depth = len(package.levels) - 1
    table = dataset.sql(f"SELECT * FROM l{depth}")
    columns = {f"l{k}:id": k for k in range(depth + 1)}
    vsi = table.column(f"l{depth}:internal:gdal_vsi").to_pylist()
    paths = ["/".join(table.column(c)[i].as_py() for c in columns) for i in range(table.num_rows)]
    sources = _sources(package)
    assert len(paths) == len(package.levels[depth])
    for rel, gdal_path in zip(paths, vsi, strict=True):
        assert read_all(gdal_path) == Path(str(sources[rel])).read_bytes(), rel


def test_tacoreader_loads_consolidated_parts(tmp_path: Path) -> None:
    taco = make_taco(tmp_path, "3level", n=5)
    per_root = taco.tortilla.samples[0].size
    create(taco, tmp_path / "ds.tacozip", split_size=2 * per_root, quiet=True)
    dataset = tacoreader.load(str(tmp_path / names.TACOCAT_DIR))
    sources = _sources(taco.metadata())
    seen: list[str] = []
    _walk(dataset.data, "", sources, seen)
    assert set(seen) == set(sources)
