"""The Jupyter HTML repr and a notebook figure, rendered by headless Chromium and looked at.

Chromium (Debian's ``chromium``) is part of the test set-up: a missing browser
fails here, it is not skipped.  The PNGs are kept under ``tmp_path`` (and
copied to ``$TACO_RENDER_DIR`` when set, to look at them).
"""

from __future__ import annotations

import base64
import io
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image as mpimg

import taco_gdal
from taco_gdal.read.notebook._svg import FILL

_BACKGROUND = np.array([0xF4, 0xF7, 0xFB]) / 255.0


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.fail("headless Chromium is not installed (Debian package 'chromium'); see setup.sh")


def _screenshot(html: str, out: Path, size: tuple[int, int]) -> np.ndarray:
    page = out.with_suffix(".html")
    body = f"<body style='margin:8px;background:#fff'>{html}</body>"
    page.write_text(f"<!doctype html><html>{body}</html>")
    command = [
        _chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        f"--screenshot={out}",
        f"--window-size={size[0]},{size[1]}",
        page.as_uri(),
    ]
    done = subprocess.run(command, capture_output=True, timeout=120, check=False)
    assert out.exists(), f"chromium wrote no screenshot: {done.stderr.decode()[-2000:]}"
    keep = os.environ.get("TACO_RENDER_DIR")
    if keep:
        shutil.copy(out, Path(keep) / out.name)
    return np.asarray(mpimg.imread(out))[:, :, :3]


def _map_box(pixels: np.ndarray) -> tuple[slice, slice]:
    """Rows/columns of the map frame: the region painted in the map's background colour."""
    frame = np.all(np.abs(pixels - _BACKGROUND) < 0.02, axis=2)
    rows, cols = np.nonzero(frame)
    assert rows.size > 1000, "no map frame drawn"
    return slice(rows.min(), rows.max() + 1), slice(cols.min(), cols.max() + 1)


def test_dataset_repr_html_rows_steps_extent_and_map(flat_path: Path, tmp_path: Path) -> None:
    ds = taco_gdal.load(str(flat_path))
    filtered = ds.filter_bbox(-4.5, 39.0, 3.0, 42.0).filter_datetime("2024-01/2024-04")
    expected = len(filtered)
    html = filtered._repr_html_()
    assert f"level0: {expected}" in html
    assert "filter_bbox(-4.5, 39, 3, 42" in html and "filter_datetime(" in html
    assert "<svg" in html and "<script" not in html
    assert not re.search(r"\d+\.\d{7,}", html), "extent shown with too many decimals"
    assert "footprints extent" in html
    assert f"{expected} footprints" in html

    pixels = _screenshot(html, tmp_path / "dataset_repr.png", (1100, 700))
    rows, cols = _map_box(pixels)
    inside = pixels[rows, cols]
    fill = np.array([int(FILL[i : i + 2], 16) for i in (1, 3, 5)]) / 255.0
    tinted = np.all(np.abs(inside - (0.35 * fill + 0.65 * _BACKGROUND)) < 0.06, axis=2)
    strokes = np.all(np.abs(inside - fill) < 0.08, axis=2)
    assert tinted.sum() > 200, "no footprint fill inside the map"
    assert strokes.sum() > 20, "no footprint outline inside the map"


def test_frame_repr_html_has_map_and_table(flat_path: Path, tmp_path: Path) -> None:
    filtered = taco_gdal.load(str(flat_path)).filter_bbox(-4.0, 39.9, -3.0, 40.8)
    frame = filtered.data  # internal:* hidden, except internal:gdal_vsi
    html = frame._repr_html_()
    assert html is not None and "<svg" in html and "<table" in html
    assert "<th>internal:offset</th>" not in html and "not shown" not in html
    everything = filtered.frame(internal=True)._repr_html_()  # asked for: the table names them
    assert everything is not None and "not shown: internal:current_id" in everything
    assert "<th>internal:offset</th>" not in everything
    assert "internal:gdal_vsi</th>" in html and "&lt;WKB 93 B&gt;" in html
    pixels = _screenshot(html, tmp_path / "frame_repr.png", (1400, 600))
    rows, cols = _map_box(pixels)
    assert (np.abs(pixels[rows, cols] - _BACKGROUND).sum(axis=2) > 0.3).sum() > 100


def test_notebook_figure_renders(flat_path: Path, tmp_path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ds = taco_gdal.load(str(flat_path)).filter_bbox(-4.5, 39.0, 3.0, 42.0)
    figure, (left, right) = plt.subplots(1, 2, figsize=(8, 4))
    ds.plot(column="istac:crs", ax=left)
    ds.data.plot_sample("utm30_1", ax=right)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=80)
    plt.close(figure)
    encoded = base64.b64encode(buffer.getvalue()).decode()
    img = f'<img src="data:image/png;base64,{encoded}">'
    pixels = _screenshot(img, tmp_path / "fig.png", (700, 360))
    axes_area = pixels[40:300, 60:300]  # the left axes (footprints), inside the frame
    coloured = (axes_area.max(axis=2) - axes_area.min(axis=2)) > 0.15
    assert coloured.sum() > 300, "no coloured footprints in the figure"
