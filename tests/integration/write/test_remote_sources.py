"""Sample bytes from any GDAL path: /vsimem/ and http:// on 127.0.0.1, streamed through VSI."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa
import pytest
from osgeo import gdal

from taco_gdal.format import names
from taco_gdal.io.vsi import read_all
from taco_gdal.model import MetadataPackage, Sample, Taco, Tortilla
from taco_gdal.write import create, write_folder, write_zip
from taco_gdal.write._progress import progress_bar
from tests.integration.write._package import package_from_tree
from tests.integration.write._verify import verify_folder, verify_zip

BIG = 9 * 1024 * 1024 + 123  # more than two 4 MiB blocks


def _payload(size: int, seed: int) -> bytes:
    return bytes((i * 31 + seed) % 251 + 1 for i in range(256)) * (size // 256) + b"x" * (
        size % 256
    )


def test_vsimem_sources(tmp_path: Path, vsimem_dir: str) -> None:
    paths = []
    for i, size in enumerate((10, BIG)):
        path = f"{vsimem_dir}/s{i}.bin"
        gdal.FileFromMemBuffer(path, _payload(size, i))
        paths.append(path)
    package = package_from_tree([("small", paths[0]), ("big", paths[1])])
    verify_zip(write_zip(package, tmp_path / "m.tacozip", quiet=True), package)
    out = write_folder(package, tmp_path / "m", quiet=True)
    assert (out / names.DATA_DIR / "big").read_bytes() == read_all(paths[1])


@pytest.mark.network
def test_http_sources(tmp_path: Path) -> None:
    from tests.support.servers.range_server import RangeServer

    www = tmp_path / "www"
    www.mkdir()
    (www / "a.bin").write_bytes(_payload(1000, 1))
    (www / "b.bin").write_bytes(_payload(BIG, 2))
    with RangeServer(root=www) as server:
        samples = [Sample("a", f"{server.url}/a.bin"), Sample("b", f"{server.url}/b.bin")]
        taco = Taco(
            Tortilla(samples),
            id="remote",
            dataset_version="1",
            description="samples served over HTTP",
            licenses=["MIT"],
            providers=[{"name": "tests"}],
            tasks=["other"],
        )
        package = taco.metadata()
        assert package.levels[0].column(names.PATH).to_pylist()[0].startswith("/vsicurl/")
        server.log.clear()
        zipped = create(taco, tmp_path / "r.tacozip", quiet=True)[0]
        ranged = [r for r in server.log.records(method="GET") if r.path.endswith("b.bin")]
        assert ranged, server.log.describe()
        folder = create(taco, tmp_path / "r", quiet=True)[0]
    for name, source in (("a", www / "a.bin"), ("b", www / "b.bin")):
        assert (folder / names.DATA_DIR / name).read_bytes() == source.read_bytes()
    # the same package with the served files' local paths, to compare bytes against
    level = package.levels[0]
    local_paths = pa.array([str(www / "a.bin"), str(www / "b.bin")])
    level = level.set_column(level.schema.get_field_index(names.PATH), names.PATH, local_paths)
    local = MetadataPackage([level], package.collection)
    verify_zip(zipped, local)
    verify_folder(folder, local)


def test_progress_bar_follows_the_terminal() -> None:
    assert progress_bar(3, "x", quiet=True).disable
    assert progress_bar(3, "x", quiet=False).disable == (not sys.stderr.isatty())
