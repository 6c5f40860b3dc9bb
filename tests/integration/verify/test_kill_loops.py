"""kill -9 at random moments: a FOLDER overwrite and a header update always leave a good state.

The driver (``_killer.py``) runs in its own process and forks the writers, with
``TACO_GDAL_FAULT_PAUSE`` making every rename / header write pause, so the
kills land between steps often.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import taco_gdal
from tests.support.datasets import write_dataset

ROOT = Path(__file__).resolve().parents[3]
KILLS = 50


def _run(mode: str, target: Path, pause: str) -> list[dict[str, object]]:
    env = {**os.environ, "TACO_GDAL_FAULT_PAUSE": pause, "PYTHONWARNINGS": "ignore"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-m", "tests.integration.verify._killer", mode, str(target), str(KILLS)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def test_folder_overwrite_kill_loop_leaves_old_or_new(tmp_path: Path) -> None:
    target = tmp_path / "out" / "dataset"
    target.parent.mkdir()
    results = _run("folder", target, "0.02")
    assert len(results) == KILLS
    bad = [r for r in results if not r["ok"]]
    assert not bad, bad[:3]
    assert {r["id"] for r in results} <= {"v0", "v1"}
    # the next write leaves no staging folder behind
    taco = taco_gdal.load(target)
    del taco
    from tests.support.datasets import make_taco

    taco_gdal.create(
        make_taco(tmp_path, "flat", dataset_id="v2"), target, overwrite=True, quiet=True
    )
    assert not [p.name for p in target.parent.iterdir() if p.name.startswith(".taco-tmp-")]
    assert taco_gdal.load(target).collection["id"] == "v2"


def test_header_update_kill_loop_is_recoverable(tmp_path: Path) -> None:
    src = write_dataset(tmp_path, "flat", "zip")
    results = _run("header", src, "0.01")
    assert len(results) == KILLS
    assert all(r["ok"] for r in results), [r for r in results if not r["ok"]][:3]
    # the kills did land between writes: some states were inconsistent before the repair
    assert any(not r["consistent_before"] for r in results)
    assert taco_gdal.verify(src, level="crc").ok


def test_cut_swap_without_exchange_is_completed_by_the_next_write(tmp_path: Path) -> None:
    """Where RENAME_EXCHANGE is missing, a kill between the two renames leaves the old
    dataset under a staging name; the next write into the folder renames it back."""
    from tests.support.datasets import make_taco

    target = tmp_path / "dataset"
    taco_gdal.create(make_taco(tmp_path, "flat", dataset_id="v0"), target, quiet=True)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    moved = tmp_path / f".taco-tmp-{dead}-~old-dataset"
    target.rename(moved)  # the state after the first rename of the fallback swap
    other = tmp_path / "other.tacozip"
    taco_gdal.create(make_taco(tmp_path, "flat", dataset_id="v1"), other, quiet=True)
    assert taco_gdal.load(target).collection["id"] == "v0"
    assert not moved.exists()
