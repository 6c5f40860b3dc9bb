"""What a TACO reader shows of a dataset, as a plain JSON-ready "view".

Standalone like ``_refbuild`` (standard library and pyarrow only): the golden
script runs it under old tacoreader versions in throwaway venvs to record the
golden manifest, and the tests apply the same ``dump`` to tacoreader 2.4.21 and
to taco_gdal, so all three are compared in one canonical form.

A view is::

    {"collection": {...COLLECTION.json...},
     "columns": {"0": [user columns of level 0 in reader order], "1": [...], ...},
     "tree": [row, ...],            # navigation through TacoDataFrame.read()
     "padding": n,                  # __TACOPAD__ rows met while navigating
     "filters": [{"kind", "args", "level", "ids"}, ...]}
    row = {"id", "type", "values": {column: json value},
           "sha256" and "size" (FILE: of the bytes its GDAL path resolves to),
           "children": [row, ...] (FOLDER)}

Readers are duck-typed: ``ds.data`` is a frame with ``read(i)`` and a way to
get an Arrow table (``to_arrow()``), ``ds.collection`` is a dict, and
``ds.filter_bbox`` / ``ds.filter_datetime`` take ``level=``.  Padding rows
(``__TACOPAD__N``) are counted and left out of the view: both readers hide them
from user-facing tables (the specification's rule).

Command line (scripts/make_golden.py)::

    python _refdump.py DATASET_PATH FILTERS.json   ->  view JSON on stdout
"""

from __future__ import annotations

import datetime as dt
import decimal
import hashlib
import json
import sys
from collections.abc import Callable
from typing import Any

import pyarrow as pa

__all__ = [
    "PADDING_PREFIX",
    "arrow_frame_rows",
    "consolidated_from_tree",
    "dump",
    "file_rows",
    "frame_table",
    "jsonable",
    "read_vsi_bytes",
    "rows_of",
    "strip_paths",
]

PADDING_PREFIX = "__TACOPAD__"
INTERNAL = "internal:"
GDAL_VSI = "internal:gdal_vsi"

ReadBytes = Callable[[str], bytes]
FrameRows = Callable[[Any], "tuple[list[str], list[dict[str, Any]]]"]


def jsonable(value: Any) -> Any:
    """A JSON value that identifies ``value`` exactly (timestamps as ISO, bytes as hex)."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if value == value else "NaN"
    if isinstance(value, bytes | bytearray | memoryview):
        return "hex:" + bytes(value).hex()
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return f"td:{value.total_seconds()}"
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return f"{type(value).__name__}:{value!r}"


def frame_table(frame: Any) -> pa.Table:
    """The Arrow table behind a reader's data frame."""
    if isinstance(frame, pa.Table):
        return frame
    for attr in ("to_arrow", "to_table"):
        method = getattr(frame, attr, None)
        if callable(method):
            table = method()
            if isinstance(table, pa.Table):
                return table
    data = getattr(frame, "_data", None)
    if isinstance(data, pa.Table):
        return data
    raise TypeError(f"cannot get an Arrow table from {type(frame).__name__}")


def rows_of(table: pa.Table) -> list[dict[str, Any]]:
    """Rows of ``table`` as dicts of Python values."""
    return list(table.to_pylist())


def arrow_frame_rows(frame: Any) -> tuple[list[str], list[dict[str, Any]]]:
    """Column names and rows of a frame that converts to Arrow (tacoreader's frames)."""
    table = frame_table(frame)
    return list(table.column_names), rows_of(table)


def read_vsi_bytes(path: str) -> bytes:
    """Bytes of a ``/vsisubfile/{off}_{size},{file}`` path or a plain local path."""
    prefix = "/vsisubfile/"
    if path.startswith(prefix):
        spec, _, target = path[len(prefix) :].partition(",")
        offset, _, size = spec.partition("_")
        with open(target, "rb") as handle:
            handle.seek(int(offset))
            data = handle.read(int(size))
        if len(data) != int(size):
            raise OSError(f"{path}: expected {size} bytes, read {len(data)}")
        return data
    with open(path, "rb") as handle:
        return handle.read()


class _Walker:
    def __init__(self, read_bytes: ReadBytes, frame_rows: FrameRows, keep_paths: bool) -> None:
        self.read_bytes = read_bytes
        self.frame_rows = frame_rows
        self.keep_paths = keep_paths
        self.columns: dict[str, list[str]] = {}
        self.padding = 0

    def frame(self, frame: Any, depth: int) -> list[dict[str, Any]]:
        names, rows = self.frame_rows(frame)
        columns = [c for c in names if not c.startswith(INTERNAL)]
        self.columns.setdefault(str(depth), columns)
        out = []
        for position, row in enumerate(rows):
            if str(row["id"]).startswith(PADDING_PREFIX):
                self.padding += 1
                continue
            out.append(self.row(frame, position, row, columns, depth))
        return out

    def row(
        self, frame: Any, position: int, row: dict[str, Any], columns: list[str], depth: int
    ) -> dict[str, Any]:
        item: dict[str, Any] = {
            "id": row["id"],
            "type": row["type"],
            "values": {c: jsonable(row[c]) for c in columns if c not in ("id", "type")},
        }
        target = frame.read(position)
        if row["type"] == "FILE":
            if not isinstance(target, str):
                raise TypeError(f"read({position}) of FILE {row['id']!r} gave {type(target)}")
            data = self.read_bytes(target)
            item["sha256"] = hashlib.sha256(data).hexdigest()
            item["size"] = len(data)
            if self.keep_paths:
                item["vsi"] = target
        else:
            item["children"] = self.frame(target, depth + 1)
        return item


def _filter_ids(ds: Any, spec: dict[str, Any], frame_rows: FrameRows) -> list[str]:
    level = int(spec["level"])
    if spec["kind"] == "bbox":
        result = ds.filter_bbox(*spec["args"], level=level)
    elif spec["kind"] == "datetime":
        result = ds.filter_datetime(*spec["args"], level=level)
    else:
        raise ValueError(f"filter kind must be bbox or datetime, got {spec['kind']!r}")
    _, rows = frame_rows(result.data)
    ids = [str(row["id"]) for row in rows]
    return sorted(i for i in ids if not i.startswith(PADDING_PREFIX))


def dump(
    ds: Any,
    read_bytes: ReadBytes = read_vsi_bytes,
    filters: list[dict[str, Any]] | None = None,
    strict: bool = True,
    frame_rows: FrameRows = arrow_frame_rows,
    keep_paths: bool = False,
) -> dict[str, Any]:
    """The canonical view of a loaded dataset ``ds`` (module docstring).

    Filter results are sorted ids (a cascade filter's row order is not defined).
    With ``strict=False`` a filter the reader cannot run is recorded as
    ``{"ids": None, "error": "..."}`` instead of raising: old readers cannot run
    cascade filters on files without ``internal:current_id``.  ``keep_paths``
    adds each FILE row's GDAL path as ``"vsi"`` (paths differ between writers
    and machines, so they are left out of views that are compared).

    Example:
        >>> view = dump(tacoreader.load("flat.tacozip"))  # doctest: +SKIP
        >>> [row["id"] for row in view["tree"]]  # doctest: +SKIP
    """
    walker = _Walker(read_bytes, frame_rows, keep_paths)
    tree = walker.frame(ds.data, 0)
    view: dict[str, Any] = {
        "collection": json.loads(json.dumps(ds.collection)),
        "columns": walker.columns,
        "tree": tree,
        "padding": walker.padding,
        "filters": [],
    }
    for spec in filters or []:
        entry = {k: v for k, v in spec.items() if k != "expect"}
        try:
            entry["ids"] = _filter_ids(ds, spec, frame_rows)
        except Exception as exc:  # recorded for old readers, re-raised when strict
            if strict:
                raise
            entry["ids"] = None
            entry["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
        view["filters"].append(entry)
    return view


def strip_paths(tree: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``tree`` without the ``"vsi"`` keys ``keep_paths`` added."""
    out = []
    for row in tree:
        item = {k: v for k, v in row.items() if k not in ("vsi", "children")}
        if "children" in row:
            item["children"] = strip_paths(row["children"])
        out.append(item)
    return out


def file_rows(tree: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """FILE rows of ``tree`` in depth-first order."""
    out = []
    for row in tree:
        if "children" in row:
            out.extend(file_rows(row["children"]))
        else:
            out.append(row)
    return out


def consolidated_from_tree(tree: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Rows per level, in depth-first order grouped by parent (the consolidated order).

    Each row keeps ``id``, ``type``, ``values`` and, for FILE rows, ``sha256``
    and ``size``; children lists are dropped.
    """
    levels: list[list[dict[str, Any]]] = []
    current = tree
    while current:
        levels.append(
            [{k: v for k, v in row.items() if k not in ("children", "vsi")} for row in current]
        )
        current = [child for row in current for child in row.get("children", [])]
    return levels


def main(argv: list[str]) -> int:
    import tacoreader

    filters = []
    if len(argv) > 2:
        with open(argv[2], encoding="utf-8") as handle:
            filters = json.load(handle)
    ds = tacoreader.load(argv[1])
    view = dump(ds, read_vsi_bytes, filters, strict=False)
    sys.stdout.write(json.dumps(view, ensure_ascii=False, sort_keys=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
