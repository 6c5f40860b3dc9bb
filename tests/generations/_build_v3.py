"""Build the TACO 3 / CoZIP fixtures with taco-eo and dump what taco-eo's reader shows.

Run by scripts/make_generations.py with the interpreter of a throwaway venv that
has ``taco-eo[writer]==0.14.2`` (never the project venv)::

    /tmp/tacoeo/bin/python tests/generations/_build_v3.py JOB.json

JOB.json: {"tifs": folder of GeoTIFFs named <seed>.tif, "out": folder}.  Writes
the fixtures into ``out`` and ``out/taco_eo_view.json``: for every fixture the
rows of each stored level (taco-eo's ``container.view.open_view``) and the wide
table of ``taco.read`` (one row per sample, one location column per structure
leaf), with the SHA-256 of the bytes behind every location.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import cozip
import pyarrow as pa
import shapely
import taco
from pydantic import BaseModel
from taco.container.view import open_view

UTC = dt.UTC


class Split(BaseModel):
    split: str


class Observation(BaseModel):
    cloud: float


class Band(BaseModel):
    resolution: float


def _stac(i: int) -> Any:
    box = shapely.box(-3.0 + i, 39.0 + i, -2.0 + i, 40.0 + i)
    return taco.metadata.spatiotemporal.STAC(
        geometry=shapely.to_wkb(box), datetime=dt.datetime(2021, 1 + i, 1, tzinfo=UTC)
    )


def _collection(contract: Any, name: str) -> Any:
    return taco.Collection(
        contract=contract,
        id=name,
        description=f"taco_gdal generations fixture {name} (València, ñ)",
        licenses=["CC-BY-4.0"],
        providers=[{"name": "taco_gdal", "roles": ["producer"]}],
    )


def flat(tifs: Path, out: Path) -> None:
    contract = taco.Contract(
        structure=["image.tif"],
        metadata=[taco.Level("sample", stac=taco.extensions.STAC(), ml=Split)],
    )
    samples = [
        taco.Sample(
            id=f"tile_{i}",
            assets=[taco.Asset(tifs / f"{i}.tif", path="image.tif")],
            metadata=taco.Metadata(stac=_stac(i), ml=Split(split="train" if i < 3 else "test")),
        )
        for i in range(4)
    ]
    _write(_collection(contract, "v3flat"), samples, out / "v3_flat.zip")


def nested(tifs: Path, out: Path) -> None:
    structure = ["before/B02.tif", "before/B03.tif", "after/B02.tif", "after/B03.tif", "change.tif"]
    contract = taco.Contract(
        structure=structure,
        metadata=[
            taco.Level("sample", stac=taco.extensions.STAC(), ml=Split),
            taco.Level("children", obs=Observation),
            taco.Level("children/before", band=Band),
            taco.Level("children/after", band=Band),
        ],
    )
    samples = []
    for i in range(3):
        assets = []
        for j, leaf in enumerate(structure):
            meta = None
            if leaf.startswith(("before/", "after/")):
                meta = taco.Metadata(band=Band(resolution=10.0 * (j + 1)))
            else:
                meta = taco.Metadata(obs=Observation(cloud=float(i)))
            assets.append(taco.Asset(tifs / f"{10 + 5 * i + j}.tif", path=leaf, metadata=meta))
        folders = [
            taco.Folder(name, metadata=taco.Metadata(obs=Observation(cloud=i + k / 10)))
            for k, name in enumerate(("before", "after"))
        ]
        samples.append(
            taco.Sample(
                id=f"pair_{i}",
                assets=assets,
                folders=folders,
                metadata=taco.Metadata(stac=_stac(i), ml=Split(split="train")),
            )
        )
    _write(_collection(contract, "v3nested"), samples, out / "v3_nested.zip")


def sequence(tifs: Path, out: Path) -> None:
    contract = taco.Contract(
        structure=["img*[1,4].tif", "label.tif"],
        metadata=[taco.Level("sample", stac=taco.extensions.STAC(), ml=Split)],
    )
    samples = []
    for i, count in enumerate((1, 3, 2)):
        assets = [
            taco.Asset(tifs / f"{40 + 4 * i + k}.tif", path=f"img{k}.tif") for k in range(count)
        ]
        assets.append(taco.Asset(tifs / f"{60 + i}.tif", path="label.tif"))
        samples.append(
            taco.Sample(
                id=f"series_{i}",
                assets=assets,
                metadata=taco.Metadata(stac=_stac(i), ml=Split(split="train")),
            )
        )
    _write(_collection(contract, "v3sequence"), samples, out / "v3_sequence.zip")


def partitioned(tifs: Path, out: Path) -> None:
    contract = taco.Contract(
        structure=["image.tif"],
        metadata=[taco.Level("sample", stac=taco.extensions.STAC(), ml=Split)],
    )
    samples = [
        taco.Sample(
            id=f"part_tile_{i}",
            assets=[taco.Asset(tifs / f"{70 + i}.tif", path="image.tif")],
            metadata=taco.Metadata(stac=_stac(i), ml=Split(split="train" if i % 2 else "val")),
        )
        for i in range(5)
    ]
    folder = out / "v3_tacocat"
    folder.mkdir(exist_ok=True)
    with taco.open_writer(
        _collection(contract, "v3cat"), folder / "cat.zip", overwrite=True, partition_by="ml:split"
    ) as writer:
        writer.extend(samples)
        writer.run()


def flat_profile(tifs: Path, out: Path) -> None:
    files = {f"tiles/t{i}.tif": (tifs / f"{80 + i}.tif").read_bytes() for i in range(3)}
    staging = out / "_flat_src"
    staging.mkdir(exist_ok=True)
    for name, data in files.items():
        (staging / name.replace("/", "_")).write_bytes(data)
    target = out / "cozip_flat.zip"
    target.unlink(missing_ok=True)
    names = list(files)
    table = pa.table(
        {
            "name": names,
            "path": [str(staging / n.replace("/", "_")) for n in names],
            "band": ["red", "green", "blue"],
        }
    )
    cozip.create(str(target), table)
    for source in staging.iterdir():
        source.unlink()
    staging.rmdir()


def _write(collection: Any, samples: list[Any], target: Path) -> None:
    with taco.open_writer(collection, target, overwrite=True) as writer:
        writer.extend(samples)
        writer.run()


def _json(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"base64": base64.b64encode(value).decode()}
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json(v) for v in value]
    return value


_SUBFILE = re.compile(r"^/vsisubfile/(\d+)_(\d+),(.*)$")


def _digest(location: str, base: Path) -> dict[str, Any]:
    match = _SUBFILE.match(location)
    assert match, location
    offset, size, container = int(match[1]), int(match[2]), Path(match[3])
    with container.open("rb") as f:
        f.seek(offset)
        data = f.read(size)
    return {
        "container": str(container.relative_to(base)),
        "offset": offset,
        "size": size,
        "sha256": hashlib.sha256(data).hexdigest(),
    }


def dump(path: Path, base: Path) -> dict[str, Any]:
    view = open_view(path)
    levels = {name: _json(table.to_pylist()) for name, table in view.tables.items()}
    wide = taco.read(path)
    samples = []
    for row in wide.to_pylist():
        files: dict[str, Any] = {}
        for name, value in row.items():
            if name.endswith("::location") and value is not None:
                leaf = name[: -len("::location")]
                if isinstance(value, list):
                    files[leaf] = [_digest(v, base) for v in value]
                else:
                    files[leaf] = _digest(value, base)
        samples.append({"id": row["id"], "index": row["taco:sample_index"], "files": files})
    return {
        "container": view.container,
        "collection": view.collection_json,
        "levels": levels,
        "samples": samples,
    }


def main() -> None:
    job = json.loads(Path(sys.argv[1]).read_text())
    tifs, out = Path(job["tifs"]), Path(job["out"])
    out.mkdir(parents=True, exist_ok=True)
    flat(tifs, out)
    nested(tifs, out)
    sequence(tifs, out)
    partitioned(tifs, out)
    flat_profile(tifs, out)
    views = {
        name: dump(out / name, out)
        for name in ("v3_flat.zip", "v3_nested.zip", "v3_sequence.zip", "v3_tacocat/.tacocat")
    }
    meta = {"taco-eo": taco.__version__, "cozip": getattr(cozip, "__version__", "?")}
    (out / "taco_eo_view.json").write_text(
        json.dumps({"tools": meta, "views": views}, indent=1, ensure_ascii=False, sort_keys=True)
    )


if __name__ == "__main__":
    main()
