"""Text and HTML summaries of a TacoDataset (``repr`` and Jupyter's ``_repr_html_``).

Built from metadata ``load`` already holds: no I/O.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from taco_gdal.errors import TacoError
from taco_gdal.read.notebook._plots import rounded_extent

if TYPE_CHECKING:
    from taco_gdal.read.dataset import TacoDataset

__all__ = ["dataset_html", "dataset_text", "hierarchy_lines"]

_MAX_IDS = 6


def _ids(values: list[Any]) -> str:
    shown = ", ".join(str(v) for v in values[:_MAX_IDS])
    return shown + (f", ... ({len(values)})" if len(values) > _MAX_IDS else "")


def hierarchy_lines(pit: Mapping[str, Any]) -> list[str]:
    """One line per level from ``taco:pit_schema``."""
    root = pit.get("root") or {}
    lines = [f"level0: {root.get('n', '?')} x {root.get('type', '?')}"]
    for depth, patterns in sorted((pit.get("hierarchy") or {}).items(), key=lambda kv: int(kv[0])):
        for pattern in patterns or []:
            ids = list(pattern.get("id") or [])
            types = list(pattern.get("type") or [])
            kinds = sorted({str(kind) for kind in types})
            lines.append(
                f"level{depth}: {pattern.get('n', '?')} rows, children [{_ids(ids)}] "
                f"({'/'.join(kinds)})"
            )
    return lines


def _extent(ds: TacoDataset) -> str:
    extent = ds.extent or {}
    spatial = extent.get("spatial")
    temporal = extent.get("temporal")
    parts = []
    if spatial and len(spatial) == 4:
        parts.append(f"bbox {list(rounded_extent(spatial))}")
    elif spatial:
        parts.append(f"bbox {list(spatial)}")
    if temporal:
        parts.append(f"{str(temporal[0])[:19]} .. {str(temporal[1])[:19]}")
    return ", ".join(parts) or "unknown"


def _summary(ds: TacoDataset) -> list[tuple[str, str]]:
    rows = [
        ("format", f"{ds.format.upper()}  {ds.path}"),
        ("version", str(ds.version)),
        ("description", str(ds.title or ds.description or "")),
        ("tasks", ", ".join(ds.tasks)),
        ("licenses", ", ".join(ds.licenses)),
        ("extent", _extent(ds)),
    ]
    if ds.keywords:
        rows.append(("keywords", ", ".join(ds.keywords)))
    return rows


def dataset_text(ds: TacoDataset) -> str:
    """Plain-text summary (``repr``)."""
    lines = [f"<TacoDataset {ds.id!r}>"]
    lines += [f"  {key}: {value}" for key, value in _summary(ds)]
    lines.append("  hierarchy:")
    lines += [f"    {line}" for line in hierarchy_lines(ds.pit_schema)]
    steps = ds.state.descriptions
    if steps:
        lines.append("  query (lazy, read .data to run):")
        lines += [f"    {i + 1}. {step}" for i, step in enumerate(steps)]
    return "\n".join(lines)


_STYLE = (
    "<style>.taco-ds{font-family:sans-serif;font-size:13px}"
    ".taco-ds table{border-collapse:collapse}.taco-ds th{text-align:left;padding:2px 10px 2px 0;"
    "color:#555;vertical-align:top}.taco-ds td{padding:2px 0}.taco-ds code{font-size:12px}"
    ".taco-ds h4{margin:4px 0}</style>"
)


def _current(ds: TacoDataset) -> tuple[list[tuple[str, str]], str]:
    """Rows per level, extent and time of the current view, and the map (SVG)."""
    try:
        facts = ds.summary()
    except TacoError as exc:  # a sql() view that dropped what the summary needs
        return [("current view", f"not summarised: {exc}")], ""
    rows = [("rows (after filters)", ", ".join(f"level{k}: {n}" for k, n in enumerate(facts.rows)))]
    if facts.extent is not None:
        rows.append(("footprints extent", f"{list(facts.extent)} (EPSG:4326)"))
    if facts.time is not None:
        rows.append(("time", f"{facts.time[0]} .. {facts.time[1]}"))
    return rows, facts.svg or ""


def dataset_html(ds: TacoDataset) -> str:
    """Self-contained HTML summary for Jupyter (``_repr_html_``), with a static SVG map."""
    esc = html.escape
    current, svg = _current(ds)
    rows = "".join(
        f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in [*_summary(ds), *current]
    )
    levels = "".join(
        f"<li><code>{esc(line)}</code></li>" for line in hierarchy_lines(ds.pit_schema)
    )
    steps = ds.state.descriptions
    query = ""
    if steps:
        items = "".join(f"<li><code>{esc(step)}</code></li>" for step in steps)
        query = f"<h4>Query (lazy: read <code>.data</code> to run)</h4><ol>{items}</ol>"
    figure = f'<div class="taco-map-box">{svg}</div>' if svg else ""
    return (
        f'{_STYLE}<div class="taco-ds"><h4>TacoDataset <code>{esc(str(ds.id))}</code></h4>'
        f'<div style="display:flex;gap:16px;align-items:flex-start"><div>'
        f"<table>{rows}</table><h4>Hierarchy (as stored)</h4><ul>{levels}</ul>{query}</div>"
        f"{figure}</div></div>"
    )
