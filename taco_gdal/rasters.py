"""A folder of rasters -> :class:`~taco_gdal.model.Sample` objects with STAC and ISTAC metadata.

What ``taco create SRC_DIR OUT`` calls: each raster becomes a FILE sample named
after its file stem, with its grid, footprint, centroid, pixel type and nodata read
with rasterio (the last two as ``taco_gdal:*`` columns, so a cube needs no sample opened).
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from taco_gdal.errors import TacoValidationError
from taco_gdal.extensions._geo import TIME_TAG_NAMES, Time, raster_facts, raster_footprint
from taco_gdal.extensions.istac import ISTAC
from taco_gdal.extensions.pixel_type import PixelType
from taco_gdal.extensions.stac import STAC

if TYPE_CHECKING:
    from taco_gdal.model.sample import Sample

__all__ = ["raster_paths", "sample_id", "samples_from_rasters"]

RasterSource = str | os.PathLike[str] | Iterable[str | os.PathLike[str]]
"""A folder, a glob pattern, or paths of rasters."""

_GLOB_CHARS = re.compile(r"[*?\[]")
_BAD_ID_CHARS = re.compile(r"[/\\:]")


def raster_paths(source: RasterSource, pattern: str = "*.tif") -> list[str]:
    """The raster paths ``source`` names, sorted (a folder or a glob) or in the given order.

    Raises:
        TacoValidationError: a folder or glob that matches nothing, or an empty list.

    Example:
        >>> raster_paths(["b.tif", "a.tif"])
        ['b.tif', 'a.tif']
    """
    if isinstance(source, (str, os.PathLike)):
        text = os.fspath(source)
        if os.path.isdir(text):
            found = sorted(str(p) for p in Path(text).glob(pattern) if p.is_file())
            where = f"folder {text!r} with pattern {pattern!r}"
        elif _GLOB_CHARS.search(text):
            found = sorted(p for p in glob.glob(text) if os.path.isfile(p))
            where = f"glob {text!r}"
        else:
            found, where = [text], f"path {text!r}"
    else:
        found = [os.fspath(p) for p in source]
        where = "the list of paths"
    if not found:
        raise TacoValidationError(
            f"samples_from_rasters: expected at least one raster, found none in {where}"
        )
    return found


def sample_id(path: str, taken: set[str]) -> str:
    r"""A sample id from a file stem: ``/ \ :`` replaced, no leading ``__``, unique in ``taken``.

    The id is added to ``taken``; a repeated stem gets ``_2``, ``_3``, ...

    Example:
        >>> taken = set()
        >>> sample_id("a/x.tif", taken), sample_id("b/x.tif", taken)
        ('x', 'x_2')
    """
    stem = _BAD_ID_CHARS.sub("_", Path(path).stem).lstrip("_") or "sample"
    candidate, number = stem, 1
    while candidate in taken:
        number += 1
        candidate = f"{stem}_{number}"
    taken.add(candidate)
    return candidate


def samples_from_rasters(
    source: RasterSource, *, pattern: str = "*.tif", time: Time | None = None
) -> list[Sample]:
    """One FILE sample per raster, with STAC, ISTAC and PixelType metadata read from the file.

    Args:
        source: a folder (its files matching ``pattern``, sorted by name), a
            glob pattern (``"scenes/*/B04.tif"``), or a list of paths.
        pattern: file pattern inside a folder.
        time: acquisition time for every raster; by default each raster's own
            ``ACQUISITIONDATETIME`` or ``TIFFTAG_DATETIME`` tag (naive = UTC).

    Raises:
        TacoValidationError: nothing matched, a raster has no CRS, or no time
            is given and a raster has no date tag (the message names the file).
        TacoIOError: a raster cannot be opened.

    Example:
        >>> samples = samples_from_rasters("scenes/")  # three GeoTIFFs tagged with a date
        >>> [s.id for s in samples], samples[0]["stac:crs"], samples[0]["istac:time_start"]
        (['scene0', 'scene1', 'scene2'], 'EPSG:32630', datetime.datetime(2024, 1, 15, 10, 0))
        >>> from taco_gdal.model import Taco, Tortilla
        >>> taco = Taco(
        ...     Tortilla(samples), id="scenes", dataset_version="1.0.0", licenses=["CC-BY-4.0"],
        ...     description="Three scenes", providers=[{"name": "me"}], tasks=["classification"],
        ... )
        >>> taco_gdal.create(taco, "scenes.tacozip", quiet=True)
        [PosixPath('.../scenes.tacozip')]
    """
    from taco_gdal.model.sample import Sample

    taken: set[str] = set()
    samples = []
    for path in raster_paths(source, pattern):
        facts = raster_facts(path, "samples_from_rasters")
        start = time if time is not None else facts.time
        if start is None:
            raise TacoValidationError(
                f"samples_from_rasters: expected a time for {facts.path!r}: pass time= "
                f"(taco create --time) or tag the raster with {TIME_TAG_NAMES}; found no tag"
            )
        stac = STAC(facts.crs, facts.shape, facts.geotransform, start)
        footprint = raster_footprint(facts.geotransform, facts.shape[1], facts.shape[2])
        istac = ISTAC(facts.crs, footprint, start)
        sample = Sample(sample_id(path, taken), path).extend_with(stac).extend_with(istac)
        samples.append(sample.extend_with(PixelType(facts.data_type, facts.nodata)))
    return samples
