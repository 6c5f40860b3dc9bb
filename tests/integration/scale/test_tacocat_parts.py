"""A TACOCAT of 5,000 parts, served over HTTP on 127.0.0.1 with a request log.

* opening it reads only the consolidated metadata (no request reaches a part);
* filters run on the consolidated rows: no part is read, and only the rows of
  the parts whose extent (``taco:sources``) meets the box come back;
* a filtered export requests only the parts that hold a selected sample, and
  from each only byte ranges inside it; the exported bytes equal the sources'.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import taco_gdal
from taco_gdal.format.names import GDAL_VSI, ID, SOURCE_FILE, SOURCES_KEY, TACOCAT_DIR
from taco_gdal.format.vsi import parse_subfile
from taco_gdal.write.export import export
from tests.integration.scale._parts import part_name, write_parts
from tests.support.servers.range_server import RangeServer
from tests.support.servers.remote import TEST_TIMEOUTS

PARTS = int(os.environ.get("TACO_TEST_PARTS", "5000"))  # fewer only to iterate locally
PER_PART = 2
BIG = 7
"""The part whose samples are 200 kB: reading one of them must not fetch the other."""
CHOSEN = (BIG, PARTS // 4 + 3, PARTS - 1)
# Writing 5,000 parts takes ~20 s of CPU (each ZipWriter touches two 4 MiB buffers); on a
# loaded machine the wall time of the module fixture can pass the default 300 s timeout.
pytestmark = [pytest.mark.slow, pytest.mark.network, pytest.mark.timeout(1200)]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RangeServer, Path]]:
    root = tmp_path_factory.mktemp("parts")
    write_parts(root / "cat", PARTS, PER_PART, big=(BIG,))
    with RangeServer(root=root) as server:
        yield server, root / "cat"


@pytest.fixture
def server(served: tuple[RangeServer, Path]) -> Iterator[RangeServer]:
    from osgeo import gdal

    server, _ = served
    server.reset()
    gdal.VSICurlClearCache()
    with taco_gdal.Env(**TEST_TIMEOUTS):
        yield server


def _paths(server: RangeServer) -> set[str]:
    return {record.path for record in server.log.records()}


def test_open_reads_only_the_consolidated_metadata(server: RangeServer) -> None:
    ds = taco_gdal.load(f"{server.url}/cat/{TACOCAT_DIR}")
    assert ds.level_counts() == [PARTS * PER_PART]
    assert len(ds.collection[SOURCES_KEY]["files"]) == PARTS
    requested = _paths(server)
    assert requested, "the TACOCAT was not read over HTTP"
    inside = f"/cat/{TACOCAT_DIR}"
    assert all(p == inside or p.startswith(inside + "/") for p in requested), requested
    assert not any(p.endswith(".tacozip") for p in requested)
    assert server.log.count() <= 10, server.log.records()


def test_a_filter_reads_no_part_and_keeps_the_parts_in_the_box(server: RangeServer) -> None:
    ds = taco_gdal.load(f"{server.url}/cat/{TACOCAT_DIR}")
    extents = ds.collection[SOURCES_KEY]["extents"]
    box = (-180.0, -80.0, -160.0, -70.0)
    expected = {
        e["file"]
        for e in extents
        if e["spatial"][0] <= box[2]
        and e["spatial"][2] >= box[0]
        and e["spatial"][1] <= box[3]
        and e["spatial"][3] >= box[1]
    }
    server.reset()
    frame = ds.filter_bbox(*box, geometry_col="istac:centroid").data
    assert set(frame[SOURCE_FILE]) == expected
    assert len(frame) == len(expected) * PER_PART
    assert not any(path.endswith(".tacozip") for path in _paths(server))


def _spans(text: str) -> tuple[int, int]:
    start, end = (int(v) for v in text.removeprefix("bytes=").split("-"))
    return start, end + 1


def test_filtered_export_copies_only_the_selected_ranges(
    server: RangeServer, served: tuple[RangeServer, Path], tmp_path: Path
) -> None:
    _, folder = served
    ds = taco_gdal.load(f"{server.url}/cat/{TACOCAT_DIR}")
    chosen = [f"p{CHOSEN[0]:05d}_1", f"p{CHOSEN[1]:05d}_0", f"p{CHOSEN[2]:05d}_1"]
    listed = ", ".join(f"'{c}'" for c in chosen)
    picked = ds.sql(f"SELECT * FROM data WHERE id IN ({listed}) ORDER BY id")
    rows = picked.data
    spans = {str(i): parse_subfile(str(v)) for i, v in zip(rows[ID], rows[GDAL_VSI], strict=True)}
    server.reset()
    out = export(picked, tmp_path / "picked.tacozip", quiet=True)
    ranges: dict[str, list[tuple[int, int]]] = {}
    for record in server.log.records(method="GET"):
        assert record.range is not None, f"{record.path}: a whole-file GET instead of a range"
        ranges.setdefault(record.path.rsplit("/", 1)[-1], []).append(_spans(record.range))
    assert set(ranges) == {part_name(p) for p in CHOSEN}  # 3 parts of PARTS, nothing else
    assert {r.path.rsplit("/", 1)[-1] for r in server.log.records()} == set(ranges)
    big_sample = spans[chosen[0]]
    sibling_end = big_sample.offset - len(chosen[0]) - 30  # the member before it ends here
    fetched_before = sum(
        max(0, min(end, sibling_end) - start) for start, end in ranges[part_name(BIG)]
    )
    assert fetched_before < 64 * 1024, "the unselected sample of the big part was fetched"
    covered = sum(end - start for start, end in ranges[part_name(BIG)])
    assert covered < 2 * big_sample.size
    with zipfile.ZipFile(out) as archive:
        for sample in chosen:
            span = spans[sample]
            source = folder / span.container.rsplit("/", 1)[-1]
            with source.open("rb") as f:
                f.seek(span.offset)
                expected = f.read(span.size)
            assert archive.read(f"DATA/{sample}") == expected
