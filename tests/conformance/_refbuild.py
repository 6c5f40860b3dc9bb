"""Build a dataset with the reference writer (tacotoolbox), from a neutral JSON description.

This module is deliberately standalone: it imports only the standard library and
tacotoolbox, so ``scripts/make_golden.py`` can run it with the interpreter of a
throwaway venv that holds an old tacotoolbox (0.18.0, 0.20.7, 0.26.1), and the
live conformance tests import it with tacotoolbox 0.26.9 from the project venv.

Description (JSON; built by ``tests/conformance/shapes.py``)::

    {"collection": {"id": ..., "dataset_version": ..., "description": ..., "licenses": [...],
                    "providers": [{"name": ...}], "tasks": [...], "title": ..., "keywords": [...]},
     "pad_to": null,                      # root tortilla padding (tacotoolbox <= 0.26.1)
     "samples": [node, ...]}
    node = {"id": str,
            "file": "relative/path.tif" | null,     # FILE when set, FOLDER otherwise
            "children": [node, ...] | null, "pad_to": int | null,
            "stac": {"crs", "tensor_shape", "geotransform", "time_start"} | null,
            "istac": {"crs", "geometry_hex", "time_start", "time_end"} | null,
            "fields": {name: value}}               # dict extension, types inferred

Times are integer seconds since the Unix epoch (UTC); tacotoolbox < 0.23 takes
seconds, later versions microseconds, and this module converts.

Command line (used by scripts/make_golden.py)::

    python _refbuild.py JOB.json

where JOB.json is ``{"spec": <description>, "files_root": dir, "output": path,
"container": "zip"|"folder"|"tacocat", "split_size": "1KB"|null}``.
"""

from __future__ import annotations

import json
import pathlib
import sys
from importlib import metadata
from typing import Any

__all__ = ["build", "tool_version"]


def tool_version() -> tuple[int, ...]:
    """Installed tacotoolbox version as a tuple of ints (``(0, 26, 9)``)."""
    text = metadata.version("tacotoolbox")
    return tuple(int(part) for part in text.split(".")[:3])


def _time(seconds: int | None) -> int | None:
    if seconds is None:
        return None
    # tacotoolbox 0.23 switched STAC/ISTAC times from seconds to microseconds.
    return seconds * 1_000_000 if tool_version() >= (0, 23) else seconds


def _sample(node: dict[str, Any], files_root: pathlib.Path) -> Any:
    from tacotoolbox.datamodel import Sample
    from tacotoolbox.sample.extensions.istac import ISTAC
    from tacotoolbox.sample.extensions.stac import STAC

    if node.get("file") is not None:
        sample = Sample(id=node["id"], path=files_root / node["file"])
    else:
        children = [_sample(child, files_root) for child in node["children"]]
        sample = Sample(id=node["id"], path=_tortilla(children, node.get("pad_to")))
    if node.get("stac"):
        s = node["stac"]
        sample.extend_with(
            STAC(
                crs=s["crs"],
                tensor_shape=tuple(s["tensor_shape"]),
                geotransform=tuple(s["geotransform"]),
                time_start=_time(s["time_start"]),
            )
        )
    if node.get("istac"):
        i = node["istac"]
        sample.extend_with(
            ISTAC(
                crs=i["crs"],
                geometry=bytes.fromhex(i["geometry_hex"]),
                time_start=_time(i["time_start"]),
                time_end=_time(i.get("time_end")),
            )
        )
    if node.get("fields"):
        sample.extend_with(dict(node["fields"]))
    return sample


def _tortilla(samples: list[Any], pad_to: int | None) -> Any:
    from tacotoolbox.datamodel import Tortilla

    if pad_to:
        return Tortilla(samples=samples, pad_to=pad_to)
    return Tortilla(samples=samples)


def _taco(spec: dict[str, Any], files_root: pathlib.Path) -> Any:
    from tacotoolbox.datamodel import Taco

    samples = [_sample(node, files_root) for node in spec["samples"]]
    return Taco(tortilla=_tortilla(samples, spec.get("pad_to")), **spec["collection"])


def build(
    spec: dict[str, Any],
    files_root: str | pathlib.Path,
    output: str | pathlib.Path,
    container: str,
    split_size: str | None = None,
) -> list[pathlib.Path]:
    """Write ``spec`` with the installed tacotoolbox; return what ``create`` returned.

    Args:
        spec: neutral description (module docstring).
        files_root: folder the ``file`` entries are relative to.
        output: ``.tacozip`` path for ``zip``/``tacocat``, folder path for ``folder``.
        container: ``zip``, ``folder`` or ``tacocat`` (several parts plus a
            consolidated index: ``.tacocat/`` from tacotoolbox 0.19 on, the
            binary ``__TACOCAT__`` before).
        split_size: part size for ``tacocat`` (e.g. ``"1KB"``).

    Example:
        >>> build(spec, "/tmp/tiffs", "/tmp/out/flat.tacozip", "zip")  # doctest: +SKIP
    """
    import tacotoolbox

    files_root = pathlib.Path(files_root)
    output = pathlib.Path(output)
    taco = _taco(spec, files_root)
    if container == "folder":
        # 0.20.x rejects the default split_size="4GB" for folders; None works everywhere.
        return list(tacotoolbox.create(taco, output, output_format="folder", split_size=None))
    if container == "zip":
        return list(tacotoolbox.create(taco, output, output_format="zip", split_size=None))
    if container != "tacocat":
        raise ValueError(f"container must be zip, folder or tacocat, got {container!r}")
    if split_size is None:
        raise ValueError("container 'tacocat' needs a split_size")
    parts = list(tacotoolbox.create(taco, output, output_format="zip", split_size=split_size))
    if len(parts) < 2:
        raise ValueError(f"split_size {split_size} gave {len(parts)} part(s), need >= 2")
    if tool_version() < (0, 19):
        # tacotoolbox 0.18 writes the binary __TACOCAT__ on request only.
        tacotoolbox.create_tacocat(parts, output=output.parent)
    return parts


def main(argv: list[str]) -> int:
    job = json.loads(pathlib.Path(argv[1]).read_text(encoding="utf-8"))
    parts = build(
        job["spec"], job["files_root"], job["output"], job["container"], job.get("split_size")
    )
    print(json.dumps([str(p) for p in parts]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
