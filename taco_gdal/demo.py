"""The end-to-end story, runnable on its own: ``python -m taco_gdal.demo [OUTPUT_DIR]``.

It makes a small Sentinel-2-like dataset (tiles -> dates), writes a ``.tacozip``,
loads it back, filters it in space and time, and reads one sample with rasterio,
printing each step.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import rasterio
from rasterio.transform import from_origin

from taco_gdal.extensions import STAC
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.read import TacoDataFrame, load
from taco_gdal.write import create

TILES = {  # tile id -> upper-left corner in EPSG:32630 (UTM 30N, around Valencia and Madrid)
    "30SYJ_0": (720_000.0, 4_380_000.0),
    "30SYJ_1": (725_120.0, 4_380_000.0),
    "30TVK_0": (440_000.0, 4_480_000.0),
    "30TVK_1": (445_120.0, 4_480_000.0),
}
DATES = [datetime(2024, 3, 1, 10, 56, 21) + timedelta(days=5 * k) for k in range(3)]
SIZE = 64  # pixels
RESOLUTION = 10.0  # metres
BANDS = 4  # B02, B03, B04, B08


def _write_scene(path: Path, origin: tuple[float, float], seed: int) -> None:
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 10_000, size=(BANDS, SIZE, SIZE), dtype=np.uint16)
    profile = {
        "driver": "GTiff",
        "width": SIZE,
        "height": SIZE,
        "count": BANDS,
        "dtype": "uint16",
        "crs": "EPSG:32630",
        "transform": from_origin(origin[0], origin[1], RESOLUTION, RESOLUTION),
        "tiled": True,
        "blockxsize": 32,
        "blockysize": 32,
        "compress": "deflate",
    }
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(data)


def _samples(folder: Path) -> Iterator[Sample]:
    seed = 0
    for tile, origin in TILES.items():
        dates = []
        for when in DATES:
            seed += 1
            path = folder / f"{tile}_{when:%Y%m%d}.tif"
            _write_scene(path, origin, seed)
            stac = STAC.from_raster(path, time_start=when.replace(tzinfo=UTC))
            dates.append(Sample(f"{when:%Y%m%d}", path, cloud_cover=float(seed % 7) * 10.0))
            dates[-1].extend_with(stac)
        yield Sample(tile, Tortilla(dates), mgrs_tile=tile[:5])


def run(out_dir: Path) -> str:
    """Run the story in ``out_dir``; returns the GDAL path of the sample it read."""
    say = print
    started = time.perf_counter()
    sources = out_dir / "geotiffs"
    sources.mkdir(parents=True, exist_ok=True)
    tiles = list(_samples(sources))
    say(f"1. made {len(TILES) * len(DATES)} GeoTIFFs ({BANDS}x{SIZE}x{SIZE} uint16, EPSG:32630)")
    say(f"   in {sources}, organised as {len(TILES)} tiles x {len(DATES)} dates")

    taco = Taco(
        Tortilla(tiles),
        id="demo_s2_tiles",
        dataset_version="1.0.0",
        description="Sentinel-2-like demo scenes over two MGRS tiles, three dates each.",
        licenses=["CC-BY-4.0"],
        providers=[{"name": "taco_gdal demo", "roles": ["producer"]}],
        tasks=["semantic-segmentation"],
        title="taco_gdal demo dataset",
    )
    output = out_dir / "demo.tacozip"
    written = create(taco, output, quiet=True)
    say(f"2. wrote {', '.join(str(p) for p in written)} ({output.stat().st_size:,} bytes)")

    ds = load(output)
    say(f"3. loaded {ds.id!r}: {len(ds.data)} tiles; extent {ds.extent}")

    # The Valencia tiles only: a bbox in WGS84 around them, tested on the dates' centroids.
    valencia = ds.filter_bbox(-0.6, 39.3, -0.3, 39.7, level=1)
    ids = sorted(valencia.data["id"])
    say(f"4. filter_bbox(-0.6, 39.3, -0.3, 39.7, level=1) kept tiles {ids}")

    window = f"{DATES[1]:%Y-%m-%dT%H:%M:%S}/{DATES[1] + timedelta(seconds=1):%Y-%m-%dT%H:%M:%S}"
    both = valencia.filter_datetime(window, level=1)
    say(f"5. filter_datetime({window!r}, level=1) kept tiles {sorted(both.data['id'])}")

    tiles_df = both.data
    dates = tiles_df.read(0)  # a FOLDER: the TacoDataFrame of its surviving children
    assert isinstance(dates, TacoDataFrame)
    vsi = dates.read(0)  # a FILE: its GDAL path
    assert isinstance(vsi, str)
    say(f"6. tile {tiles_df['id'].iloc[0]!r} -> date {dates['id'].iloc[0]!r} -> {vsi}")
    with rasterio.open(vsi) as src:
        pixels = src.read(1)
        say(
            f"7. rasterio.open read band 1: {src.count} bands {src.width}x{src.height} "
            f"{src.crs}, mean {pixels.mean():.1f}"
        )
    say(f"done in {time.perf_counter() - started:.2f} s")
    return vsi


DEFAULT_OUTPUT = Path("taco-demo")
MARKER = ".taco-demo"
"""A file the demo leaves in its folder, so that a second run may replace the folder."""


def _prepare(out: Path) -> str | None:
    """Make ``out`` ready; an error message when it holds files the demo did not write."""
    if out.exists() and any(out.iterdir()):
        if not (out / MARKER).is_file():
            return f"{out} is not empty and was not written by the demo; choose another folder"
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text("written by python -m taco_gdal.demo; safe to delete\n")
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "output",
        nargs="?",
        default=str(DEFAULT_OUTPUT),
        help=f"folder for the demo files (default: ./{DEFAULT_OUTPUT}/; a folder from an "
        "earlier demo run is replaced, any other non-empty folder is refused)",
    )
    args = parser.parse_args(argv)
    out = Path(args.output).absolute()
    problem = _prepare(out)
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2
    vsi = run(out)
    print(f"the dataset stays in {out / 'demo.tacozip'}; open a sample with: gdalinfo '{vsi}'")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
