"""Mutation fuzzing through the real loader: what may come out of ``load()`` on hostile bytes.

A *target* is a pristine dataset on disk, the file and byte region to mutate
(or, for the structured targets of :mod:`tests.fuzz._targets`, a function that
rewrites a document from the mutation), and the path to load.
:func:`run_mutation` writes the mutated file, loads it, drives every public call
(``.data``, ``repr`` and ``_repr_html_`` of the dataset and the frame,
``filter_bbox`` / ``filter_datetime`` at level 0 and level 1, ``export``), reads
every FILE sample's bytes and runs ``verify``:

* any exception that is not a :class:`~taco_gdal.errors.TacoError` is a bug;
* a mutation that loads and *verifies clean* must serve exactly the original
  bytes for every sample (where the format can know: ZIP, TACOCAT, TARIDX;
  CAF stores no checksum, so there only the first rule applies).
"""

from __future__ import annotations

import shutil
import tarfile
import tempfile
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from osgeo import gdal

import taco_gdal
from taco_gdal import Sample, Taco, Tortilla
from taco_gdal.errors import TacoError, TacoWarning
from taco_gdal.format import zip as zipfmt
from taco_gdal.format.names import FILE, GDAL_VSI, ID, TYPE
from taco_gdal.format.zip import read_central_directory
from taco_gdal.io.header import read_header
from taco_gdal.io.vsi import read_range
from taco_gdal.write import create
from tests.support.datasets import make_geotiff, write_dataset

Mutation = Sequence[tuple[int, int]]
"""``(position in the region, new byte value)`` pairs."""


@dataclass
class Target:
    """What one fuzzer mutates and loads."""

    name: str
    mutated: Path
    region: tuple[int, int]
    load_path: Path
    truth: dict[str, bytes] | None = field(repr=False)
    pristine: bytes = field(default=b"", repr=False)
    outcomes: dict[str, int] = field(default_factory=dict)
    calls: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per public call: how many cases ran it and how many it refused (a TacoError)."""
    rewrite: Callable[[Mutation, int | None], None] | None = field(default=None, repr=False)
    """Writes the mutated document itself (structured targets); None: bytes of ``region``."""


def _samples(path: Path) -> dict[str, bytes]:
    return _served(taco_gdal.load(path).data)


def _served(frame: pd.DataFrame) -> dict[str, bytes]:
    """Every FILE row's bytes, by id, read through its GDAL path."""
    return {
        str(ident): read_range(vsi, 0, _size(vsi))
        for ident, kind, vsi in zip(frame[ID], frame[TYPE], frame[GDAL_VSI], strict=True)
        if kind == FILE
    }


def _footprints(frame: pd.DataFrame) -> None:
    """Compute every footprint: ``.data`` defers them, and a case must decode all the WKB."""
    geometry = getattr(frame, "geometry", None) if "geometry" in frame.columns else None
    if geometry is not None:
        geometry.total_bounds  # noqa: B018 - computing is the point


def _size(vsi_path: str) -> int:
    if vsi_path.startswith("/vsisubfile/"):
        return int(vsi_path.split(",", 1)[0].rsplit("_", 1)[1])
    stat = gdal.VSIStatL(vsi_path)
    return 0 if stat is None else int(stat.size)


def _ranges(path: Path) -> list[tuple[int, int]]:
    return [(e.offset, e.end) for e in read_header(str(path)).entries]


def _tiny_zip(root: Path) -> Path:
    """Three samples of 7, 16 and 1 bytes, no metadata columns beyond the spec's.

    The TACO_HEADER and central-directory fuzzers mutate bytes that do not depend
    on the level table's content, so they load this one: each case costs about
    half of what the STAC-rich dataset costs (fewer columns to convert and bind).
    """
    root.mkdir(parents=True)
    samples = []
    for i, size in enumerate((7, 16, 1)):
        path = root / f"b{i}.bin"
        path.write_bytes(bytes([65 + i]) * size)
        samples.append(Sample(f"b{i}", path))
    taco = Taco(
        Tortilla(samples),
        id="fuzz_tiny",
        dataset_version="1.0.0",
        description="three tiny samples for the fuzzers",
        licenses=["CC0-1.0"],
        providers=[{"name": "taco_gdal fuzz"}],
        tasks=["other"],
    )
    return create(taco, root / "tiny.tacozip", quiet=True)[0]


def _with_zip64_end(path: Path, out: Path) -> Path:
    """A copy of ``path`` ending in ZIP64 EOCD + locator + EOCD, as a ZIP of 65,535+ members does.

    Mutating this tail reaches the classic EOCD, the locator, the ZIP64 record
    and, once the locator's signature is hit, the classic-only path too.
    """
    data = path.read_bytes()
    archive = read_central_directory(lambda offset, size: data[offset : offset + size], len(data))
    cd_end = archive.cd_offset + archive.cd_size
    count = len(archive.entries)
    out.write_bytes(
        data[:cd_end]
        + zipfmt.Zip64EndOfCentralDirectory(count, archive.cd_size, archive.cd_offset).pack()
        + zipfmt.Zip64Locator(cd_end).pack()
        + zipfmt.EndOfCentralDirectory(count, archive.cd_size, archive.cd_offset).pack()
    )
    return out


def make_targets(root: Path) -> dict[str, Target]:
    """Pristine datasets for every parser reachable from ``load()``."""
    targets: dict[str, Target] = {}
    tiny = _tiny_zip(root / "tiny")
    tiny_truth = _samples(tiny)
    targets["taco_header"] = Target("taco_header", tiny, (0, 157), tiny, tiny_truth)
    tiny64 = _with_zip64_end(tiny, tiny.with_name("tiny64.tacozip"))
    targets["eocd_cd"] = Target(
        "eocd_cd", tiny64, (_ranges(tiny)[-1][1], tiny64.stat().st_size), tiny64, tiny_truth
    )
    zpath = write_dataset(root / "zip", "flat", "zip", n=4)  # STAC columns, WKB, timestamps
    ranges, truth = _ranges(zpath), _samples(zpath)
    targets["parquet"] = Target("parquet", zpath, ranges[0], zpath, truth)
    targets["collection"] = Target("collection", zpath, ranges[-1], zpath, truth)
    cat = write_dataset(root / "cat", "flat", "tacocat")
    binary = cat.parent / "__TACOCAT__"
    shutil.rmtree(cat)  # load the binary __TACOCAT__
    targets["tacocat"] = Target(
        "tacocat", binary, (0, binary.stat().st_size), binary, _samples(binary)
    )
    caf, tar_index = _plugins(root / "plugins")
    caf_size = caf.stat().st_size
    targets["caf"] = Target("caf", caf, (max(0, caf_size - 400), caf_size), caf, None)
    targets["taridx"] = Target(
        "taridx", tar_index, (0, tar_index.stat().st_size), tar_index, _samples(tar_index)
    )
    for target in targets.values():
        target.pristine = target.mutated.read_bytes()
    return targets


def _plugins(root: Path) -> tuple[Path, Path]:
    from taco_caf.write import write_caf
    from taco_taridx.write import write_taridx

    root.mkdir(parents=True)
    files = []
    for i in range(3):
        path = root / f"img{i}.tif"
        make_geotiff(path, i)
        files.append(path)
    caf = write_caf({f"m{i}.tif": p for i, p in enumerate(files)}, root / "data.caf")
    with tarfile.open(root / "train.tar", "w", format=tarfile.PAX_FORMAT) as tar:
        for i, path in enumerate(files):
            tar.add(path, arcname=f"k{i}.tif")
    return caf, write_taridx(root / "train.tar", root / "train.taridx")


def mutate(target: Target, mutation: Mutation, truncate: int | None) -> None:
    if target.rewrite is not None:
        target.rewrite(mutation, truncate)
        return
    data = bytearray(target.pristine)
    start, end = target.region
    width = max(1, end - start)
    for position, value in mutation:
        index = start + position % width
        if index < len(data):
            data[index] = value
    if truncate is not None:
        data = data[: start + truncate % (width + 1)]
    target.mutated.write_bytes(bytes(data))


def _count(target: Target, outcome: str) -> str:
    target.outcomes[outcome] = target.outcomes.get(outcome, 0) + 1
    return outcome


def run_mutation(target: Target, mutation: Mutation, truncate: int | None = None) -> str:
    """Mutate, load, read, verify; return the outcome, raise AssertionError on a bug."""
    mutate(target, mutation, truncate)
    gdal.VSICurlClearCache()
    try:
        try:
            ds = taco_gdal.load(target.load_path)
        except TacoError:
            return _count(target, "refused")
        try:
            frame = ds.data
            _footprints(frame)
            served: dict[str, bytes] | None = _served(frame)
        except TacoError:  # refused, but every other call is still driven
            served = None
        for name, counts in drive(ds).items():
            tally = target.calls.setdefault(name, {"ran": 0, "refused": 0})
            tally["ran"] += counts["ran"]
            tally["refused"] += counts["refused"]
        if served is None:
            return _count(target, "refused")
        try:
            report = taco_gdal.verify(target.load_path, level="crc")
        except TacoError:
            return _count(target, "loaded, verify refused")
        if not report.ok:
            return _count(target, "loaded, verify caught")
        if target.truth is not None:
            wrong = {k for k, v in served.items() if target.truth.get(k) != v}
            assert not wrong, f"{target.name}: wrong bytes served silently for {sorted(wrong)}"
        return _count(target, "loaded, verified, bytes right")
    finally:
        target.mutated.write_bytes(target.pristine)


_WORLD = (-180.0, -90.0, 180.0, 90.0)


def _calls(ds: Any, level: int) -> dict[str, Callable[[], object]]:
    """Every public call on a loaded dataset by name, each run on its own (a TacoError ends
    only it)."""

    def frame_views() -> object:
        frame = ds.data
        return repr(frame), frame._repr_html_()

    calls: dict[str, Callable[[], object]] = {
        "repr": lambda: repr(ds),
        "_repr_html_": lambda: ds._repr_html_(),
        ".data repr and HTML": frame_views,
        "filter_bbox world": lambda: _footprints(ds.filter_bbox(*_WORLD, level=level).data),
        "filter_bbox small": lambda: ds.filter_bbox(-4.0, 40.0, -3.0, 41.0, level=level).data,
        "filter_bbox antimeridian": lambda: (
            ds.filter_bbox(170.0, -10.0, -170.0, 10.0, level=level).data
        ),
        "filter_datetime range": lambda: (
            ds.filter_datetime("1900-01-01/2100-01-01", level=level).data
        ),
        "filter_datetime year": lambda: ds.filter_datetime("2023", level=level).data,
    }
    if level == 0:
        return calls
    return {f"{name} (level {level})": call for name, call in calls.items() if "filter" in name}


def _export(ds: Any) -> None:
    with tempfile.TemporaryDirectory(prefix="taco-fuzz-export-") as out:
        taco_gdal.export(ds, Path(out) / "x.tacozip", quiet=True)


def drive(ds: Any) -> dict[str, dict[str, int]]:
    """Run every public call on ``ds``: levels 0 and 1, reprs, filters, export.

    A TacoError is a refusal of that call; any other exception propagates (a bug).
    Returns, per call, whether it ran and whether it was refused (0 or 1 each).
    """
    try:
        depth = int(ds.max_depth)
    except TacoError:
        depth = 0
    calls = {**_calls(ds, 0), **(_calls(ds, 1) if depth >= 1 else {})}
    calls["export"] = lambda: _export(ds)
    counts = {}
    for name, call in calls.items():
        counts[name] = {"ran": 1, "refused": 0}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", TacoWarning)  # e.g. a box outside the extent
                call()
        except TacoError:
            counts[name]["refused"] = 1
    return counts


def check_no_escape(call: Callable[[], object]) -> str:
    """Run a parser: a TacoError is a refusal; anything else propagates (a bug)."""
    try:
        call()
    except TacoError:
        return "refused"
    return "parsed"
