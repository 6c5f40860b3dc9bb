"""Build a dataset with taco_gdal from the neutral description ``_refbuild`` documents.

Same input, same meaning as ``_refbuild.build``, so the conformance tests can
compare what tacotoolbox and taco_gdal write for one description.
"""

from __future__ import annotations

import pathlib
from typing import Any

from taco_gdal.extensions import ISTAC, STAC
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.write import create

__all__ = ["build", "taco_of"]

_MICRO = 1_000_000


def _us(seconds: int | None) -> int | None:
    return None if seconds is None else seconds * _MICRO


def _sample(node: dict[str, Any], files_root: pathlib.Path) -> Sample:
    if node.get("file") is not None:
        sample = Sample(node["id"], files_root / node["file"])
    else:
        children = [_sample(child, files_root) for child in node["children"]]
        sample = Sample(node["id"], Tortilla(children, pad_to=node.get("pad_to")))
    if node.get("stac"):
        s = node["stac"]
        sample.extend_with(
            STAC(
                crs=s["crs"],
                tensor_shape=tuple(s["tensor_shape"]),
                geotransform=tuple(s["geotransform"]),
                time_start=_us(s["time_start"]),
            )
        )
    if node.get("istac"):
        i = node["istac"]
        sample.extend_with(
            ISTAC(
                crs=i["crs"],
                geometry=bytes.fromhex(i["geometry_hex"]),
                time_start=_us(i["time_start"]),
                time_end=_us(i.get("time_end")),
            )
        )
    if node.get("fields"):
        sample.extend_with(dict(node["fields"]))
    return sample


def taco_of(spec: dict[str, Any], files_root: str | pathlib.Path) -> Taco:
    """The taco_gdal ``Taco`` a neutral description stands for."""
    root = pathlib.Path(files_root)
    samples = [_sample(node, root) for node in spec["samples"]]
    return Taco(Tortilla(samples, pad_to=spec.get("pad_to")), **spec["collection"])


def build(
    spec: dict[str, Any],
    files_root: str | pathlib.Path,
    output: str | pathlib.Path,
    container: str,
    split_size: str | None = None,
) -> list[pathlib.Path]:
    """Write ``spec`` with taco_gdal (``zip``, ``folder`` or ``tacocat`` = split + consolidate).

    Example:
        >>> build(spec, "/tmp/tiffs", "/tmp/out/flat.tacozip", "zip")  # doctest: +SKIP
    """
    taco = taco_of(spec, files_root)
    if container == "folder":
        return create(taco, output, output_format="folder", quiet=True)
    if container == "zip":
        return create(taco, output, output_format="zip", split_size=None, quiet=True)
    if container != "tacocat" or split_size is None:
        raise ValueError(
            f"container must be zip, folder or tacocat (+split_size), got {container!r}"
        )
    parts = create(taco, output, output_format="zip", split_size=split_size, quiet=True)
    if len(parts) < 2:
        raise ValueError(f"split_size {split_size} gave {len(parts)} part(s), need >= 2")
    return parts
