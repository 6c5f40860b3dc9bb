"""The README's main job runs end to end and reports each step."""

from __future__ import annotations

import subprocess
import sys


def test_demo_runs_end_to_end(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "taco_gdal.demo", str(tmp_path / "demo")],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert (tmp_path / "demo" / "demo.tacozip").is_file()
    assert any(
        line.startswith("4. filter_bbox") and "'30SYJ_0', '30SYJ_1'" in line for line in lines
    )
    assert any(line.startswith("5. filter_datetime") for line in lines)
    assert any("/vsisubfile/" in line and "demo.tacozip" in line for line in lines)
    assert any(
        line.startswith("7. rasterio.open read band 1: 4 bands 64x64 EPSG:32630") for line in lines
    )


def test_demo_refuses_non_empty_folder(tmp_path):
    (tmp_path / "x").write_text("keep me")
    out = subprocess.run(
        [sys.executable, "-m", "taco_gdal.demo", str(tmp_path)], capture_output=True, text=True
    )
    assert out.returncode == 2
    assert (tmp_path / "x").read_text() == "keep me"


def test_demo_default_folder_is_kept_and_rerunnable(tmp_path):
    """No argument: ./taco-demo/ in the working folder; the printed path still opens."""
    for _ in range(2):  # a second run replaces the demo's own folder
        out = subprocess.run(
            [sys.executable, "-m", "taco_gdal.demo"],
            capture_output=True,
            text=True,
            timeout=240,
            cwd=tmp_path,
        )
        assert out.returncode == 0, out.stderr
    last = out.stdout.splitlines()[-1]
    vsi = last.split("gdalinfo '", 1)[1].rstrip("'")
    assert str(tmp_path / "taco-demo" / "demo.tacozip") in vsi
    from osgeo import gdal

    ds = gdal.Open(vsi)
    assert ds is not None, vsi
    assert (ds.RasterXSize, ds.RasterYSize, ds.RasterCount) == (64, 64, 4)
