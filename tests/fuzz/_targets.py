"""Structured fuzz targets: every JSON document of every container, WKB type codes, Parquet
pages beneath a valid footer, tar member names that are not UTF-8.

Each target's ``rewrite`` turns a mutation into a new document (see
:mod:`tests.fuzz._documents`); the harness then drives every public call on the result.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import shapely

from taco_caf.layout import FOOTER_SIZE, pack_footer
from taco_gdal.io.header import read_header
from taco_taridx.write import write_taridx
from tests.fuzz._documents import (
    Mutation,
    mutate_json,
    mutate_wkb,
    mutated_names,
    parquet_pages,
)
from tests.fuzz._harness import Target, _samples
from tests.support.datasets import make_geotiff, write_dataset

__all__ = ["STRUCTURED", "make_structured_targets"]

STRUCTURED = (
    "folder_json",
    "tacocat_json",
    "caf_json",
    "wkb",
    "parquet_pages",
    "taridx_names",
)
"""Names of the structured targets, in the order :func:`make_structured_targets` builds them."""


def _json_target(name: str, document: Path, load_path: Path, truth: bool = True) -> Target:
    pristine = document.read_text(encoding="utf-8")

    def rewrite(mutation: Mutation, truncate: int | None) -> None:
        data = mutate_json(pristine, mutation)
        document.write_bytes(data if truncate is None else data[: truncate % (len(data) + 1)])

    return Target(
        name,
        document,
        (0, 0),
        load_path,
        _samples(load_path) if truth else None,
        rewrite=rewrite,
    )


def _caf_target(root: Path) -> Target:
    from taco_caf.write import write_caf

    root.mkdir(parents=True)
    files = {}
    for i in range(3):
        path = root / f"img{i}.tif"
        make_geotiff(path, i)
        files[f"m{i}.tif"] = path
    caf = write_caf(files, root / "data.caf")
    pristine = caf.read_bytes()
    size = int.from_bytes(pristine[-FOOTER_SIZE:], "little")
    data, index = pristine[: -FOOTER_SIZE - size], pristine[-FOOTER_SIZE - size : -FOOTER_SIZE]

    def rewrite(mutation: Mutation, truncate: int | None) -> None:
        mutated = mutate_json(index.decode("utf-8"), mutation)
        caf.write_bytes(data + mutated + pack_footer(len(mutated)))

    return Target("caf_json", caf, (0, 0), caf, None, rewrite=rewrite)


def _wkb_target(root: Path) -> Target:
    """WKB of ``stac:centroid`` at level 0 (which the 2-level dataset is given, with a time,
    so that level-0 filters and the extent read it) or at level 1."""
    folder = write_dataset(root, "2level", "folder")
    levels = [folder / "METADATA" / f"level{k}.parquet" for k in (0, 1)]
    tables = [pq.read_table(path) for path in levels]
    if "stac:centroid" not in tables[0].column_names:
        count = tables[0].num_rows
        points = shapely.points(-3.7 + 0.05 * np.arange(count), np.full(count, 40.4))
        tables[0] = tables[0].append_column(
            "stac:centroid", pa.array(shapely.to_wkb(points).tolist(), pa.binary())
        )
        times = np.datetime64("2023-01-01T10:00", "us") + np.arange(count).astype("m8[D]")
        tables[0] = tables[0].append_column("stac:time_start", pa.array(times))
        pq.write_table(tables[0], levels[0])

    def rewrite(mutation: Mutation, truncate: int | None) -> None:
        level = mutation[0][0] % 2 if mutation else 0
        for k, (path, table) in enumerate(zip(levels, tables, strict=True)):
            if k == level and "stac:centroid" in table.column_names:
                at = table.column_names.index("stac:centroid")
                values = table.column(at).to_pylist()
                table = table.set_column(at, "stac:centroid", mutate_wkb(values, mutation))
            pq.write_table(table, path)

    return Target("wkb", levels[1], (0, 0), folder, _samples(folder), rewrite=rewrite)


def _pages_target(root: Path) -> Target:
    path = write_dataset(root, "2level", "zip")
    entry = read_header(str(path)).entries[0]  # level0.parquet
    data = path.read_bytes()
    region = parquet_pages(data, entry.offset, entry.end)
    return Target("parquet_pages", path, region, path, _samples(path))


def _names_target(root: Path) -> Target:
    root.mkdir(parents=True)
    files = []
    for i in range(3):
        path = root / f"img{i}.tif"
        make_geotiff(path, i)
        files.append(path)
    shard = root / "train.tar"
    index = root / "train.taridx"
    names = [f"k{i}.tif" for i in range(3)]

    def rewrite(mutation: Mutation, truncate: int | None) -> None:
        with tarfile.open(
            shard, "w", format=tarfile.GNU_FORMAT, encoding="utf-8", errors="surrogateescape"
        ) as tar:
            for name, path in zip(mutated_names(names, mutation), files, strict=True):
                tar.add(path, arcname=name)
        write_taridx(shard, index, overwrite=True)

    rewrite([], None)
    return Target("taridx_names", shard, (0, 0), index, None, rewrite=rewrite)


def make_structured_targets(root: Path) -> dict[str, Target]:
    """Pristine datasets for the structured mutators, by name (see :data:`STRUCTURED`)."""
    folder = write_dataset(root / "folder", "2level", "folder")
    cat = write_dataset(root / "cat", "flat", "tacocat")  # the .tacocat folder
    targets = {
        "folder_json": _json_target("folder_json", folder / "COLLECTION.json", folder),
        "tacocat_json": _json_target("tacocat_json", cat / "COLLECTION.json", cat),
        "caf_json": _caf_target(root / "caf"),
        "wkb": _wkb_target(root / "wkb"),
        "parquet_pages": _pages_target(root / "pages"),
        "taridx_names": _names_target(root / "names"),
    }
    for target in targets.values():
        target.pristine = target.mutated.read_bytes()
    return targets
