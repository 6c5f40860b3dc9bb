"""Kill-loop driver, run as a script by the tests (``python -m tests.integration.verify._killer``).

It imports taco_gdal once, then ``fork()``s a child that repeats an update
forever (with ``TACO_GDAL_FAULT_PAUSE`` set, so every rename or header write
is followed by a pause), sends it ``SIGKILL`` after a random delay, and checks
what is on disk.  One JSON line per kill goes to stdout.  Forking here, not in
pytest, keeps the suite's process free of threads started by fork.

Modes:
    folder DIR N   ``create(overwrite=True)`` of a FOLDER, alternating two datasets.
    header ZIP N   ``update_header`` alternating two entry lists.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import time
from pathlib import Path


def _folder_child(out: Path, tacos: list[object]) -> None:
    from taco_gdal.write import create

    i = 0
    while True:
        create(tacos[i % 2], out, overwrite=True, quiet=True)
        i += 1


def _folder_check(out: Path, ids: set[str]) -> dict[str, object]:
    import taco_gdal

    try:
        ds = taco_gdal.load(out)
        found = str(ds.collection["id"])
        ok = found in ids and taco_gdal.verify(out, level="structure").ok
    except taco_gdal.TacoError as exc:
        return {"ok": False, "error": str(exc)}
    return {"ok": ok, "id": found}


def _header_child(path: Path, plans: list[list[object]]) -> None:
    from taco_gdal.io.header import update_header

    i = 0
    while True:
        update_header(str(path), plans[i % 2])  # type: ignore[arg-type]
        i += 1


def _header_check(path: Path) -> dict[str, object]:
    import zipfile

    import taco_gdal
    from taco_gdal.io.header import read_header, repair_header, update_header

    with zipfile.ZipFile(path) as z:
        consistent = z.testzip() is None
    repaired = bool(repair_header(str(path)))
    with zipfile.ZipFile(path) as z:
        after = z.testzip() is None
    taco_gdal.load(path)
    update_header(str(path), read_header(str(path)).entries)  # re-running the update is safe
    return {"ok": after, "consistent_before": consistent, "repaired": repaired}


def main() -> None:
    mode, target, count = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    seed = int(os.environ.get("KILL_SEED", "11"))
    rng = random.Random(seed)
    if mode == "folder":
        sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
        from tests.support.datasets import make_taco

        tacos = [
            make_taco(target.parent / f"src{i}", "flat", n=3, dataset_id=f"v{i}") for i in (0, 1)
        ]
        from taco_gdal.write import create

        create(tacos[0], target, overwrite=True, quiet=True)
        child, check = (
            (lambda: _folder_child(target, tacos)),
            (lambda: _folder_check(target, {"v0", "v1"})),
        )
    else:
        from taco_gdal.format.header import HeaderEntry
        from taco_gdal.io.header import read_header

        entries = list(read_header(str(target)).entries)
        # two valid plans with different payloads: an empty slot more (readers skip it)
        plans: list[list[object]] = [list(entries), [*entries, HeaderEntry(0, 0)]]
        child, check = (lambda: _header_child(target, plans)), (lambda: _header_check(target))
    for n in range(count):
        pid = os.fork()
        if pid == 0:
            try:
                child()
            finally:
                os._exit(0)
        time.sleep(rng.uniform(0.0, 0.25))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        result = check()
        result["kill"] = n
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
