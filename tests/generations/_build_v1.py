"""Build the TACO v1 fixtures (.taco, .tortilla) and dump what tacoreader 0.6.5 shows.

Run by scripts/make_generations.py with the interpreter of a throwaway venv that
has ``tacotoolbox==0.5.2 pytortilla==0.5.1 tacoreader==0.6.5`` (never the
project venv)::

    /tmp/taco_generations/v1/bin/python tests/generations/_build_v1.py JOB.json

JOB.json: {"tifs": folder of GeoTIFFs named <seed>.tif, "out": folder}.  Writes
``v1_flat.taco`` (tacotoolbox), ``v1_flat.tortilla`` (pytortilla), and
``v1_nested.taco`` (samples that are tortillas), and ``tacoreader_view.json``:
every row tacoreader.load() returns (and, for TORTILLA samples, every row of
``.read(i)``), with the SHA-256 of the bytes behind each ``internal:subfile``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

import pytortilla
import tacoreader
import tacotoolbox
from pytortilla.datamodel.main import STAC, Sample, Samples

_SUBFILE = re.compile(r"^/vsisubfile/(\d+)_(\d+),(.*)$")


def _stac(i: int) -> Any:
    return STAC(
        crs="EPSG:4326",
        raster_shape=(8, 8),
        geotransform=(-3.0 + i, 0.001, 0.0, 40.0 + i, 0.0, -0.001),
        time_start=dt.datetime(2019, 1 + i, 1),
        centroid=f"POINT ({-3.0 + i + 0.004} {40.0 + i - 0.004})",
    )


def _samples(tifs: Path, seeds: list[int], prefix: str) -> Samples:
    return Samples(
        samples=[
            Sample(
                id=f"{prefix}{k}",
                path=tifs / f"{seed}.tif",
                file_format="GTiff",
                data_split="train" if k % 2 == 0 else "test",
                stac_data=_stac(k),
                cloud=float(k) / 10,
            )
            for k, seed in enumerate(seeds)
        ]
    )


def _collection(name: str) -> Any:
    return tacotoolbox.datamodel.Collection(
        id=name,
        dataset_version="1.0.0",
        description=f"taco_gdal generations fixture {name} (TACO v1)",
        licenses=["cc-by-4.0"],
        extent={
            "spatial": [[-3.0, 39.0, 1.0, 43.0]],
            "temporal": [["2019-01-01T00:00:00Z", "2019-12-31T00:00:00Z"]],
        },
        providers=[{"name": "taco_gdal", "roles": ["producer"]}],
        task="segmentation",
    )


def build(tifs: Path, out: Path) -> None:
    tacotoolbox.create(
        _collection("vflat"),
        _samples(tifs, [0, 1, 2], "tile_"),
        out / "v1_flat.taco",
        quiet=True,
        nworkers=1,
    )
    pytortilla.create(
        _samples(tifs, [3, 4, 5], "img_"), out / "v1_flat.tortilla", quiet=True, nworkers=1
    )
    inner = []
    for j in range(2):
        path = out / f"_inner{j}.tortilla"
        pytortilla.create(
            _samples(tifs, [20 + 3 * j + k for k in range(3)], "band_"),
            path,
            quiet=True,
            nworkers=1,
        )
        inner.append(path)
    outer = Samples(
        samples=[
            Sample(id=f"roi_{j}", path=path, file_format="TORTILLA", data_split="train")
            for j, path in enumerate(inner)
        ]
    )
    tacotoolbox.create(
        _collection("vnested"), outer, out / "v1_nested.taco", quiet=True, nworkers=1
    )
    for path in inner:
        path.unlink()


def _plain(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if hasattr(value, "tolist"):
        return _plain(value.tolist())
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, bytes):
        return value.hex()
    return value


def _rows(frame: Any, base: Path) -> list[dict[str, Any]]:
    rows = []
    for record in frame.to_dict(orient="records"):
        row = {str(k): _plain(v) for k, v in record.items() if k != "geometry"}
        match = _SUBFILE.match(row["internal:subfile"])
        assert match, row["internal:subfile"]
        offset, size, container = int(match[1]), int(match[2]), Path(match[3])
        with container.open("rb") as f:
            f.seek(offset)
            data = f.read(size)
        row["internal:subfile"] = f"/vsisubfile/{offset}_{size},{container.relative_to(base)}"
        row["sha256"] = hashlib.sha256(data).hexdigest()
        rows.append(row)
    return rows


def dump(path: Path, base: Path) -> dict[str, Any]:
    frame = tacoreader.load(str(path))
    view: dict[str, Any] = {"rows": _rows(frame, base), "children": {}}
    if path.suffix == ".taco":
        view["collection"] = tacoreader.load_metadata(str(path))
    for position, kind in enumerate(frame["tortilla:file_format"]):
        if kind == "TORTILLA":
            view["children"][str(frame["tortilla:id"].iloc[position])] = _rows(
                frame.read(position), base
            )
    return view


def main() -> None:
    job = json.loads(Path(sys.argv[1]).read_text())
    tifs, out = Path(job["tifs"]), Path(job["out"])
    out.mkdir(parents=True, exist_ok=True)
    build(tifs, out)
    views = {
        name: dump(out / name, out)
        for name in ("v1_flat.taco", "v1_flat.tortilla", "v1_nested.taco")
    }
    tools = {"tacoreader": tacoreader.__version__}
    (out / "tacoreader_view.json").write_text(
        json.dumps({"tools": tools, "views": views}, indent=1, ensure_ascii=False, sort_keys=True)
    )


if __name__ == "__main__":
    main()
