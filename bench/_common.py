"""What several benchmark scripts share: the reference timing fields and the JSON output.

Imported as ``bench._common`` (``python -m bench.<script>``) or ``_common`` (run as
a script, with ``bench/`` first on ``sys.path``).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

START = datetime(2023, 1, 1)
"""``acq`` of sample 0; sample ``i`` was acquired ``i`` minutes later."""


def reference_fields(i: int) -> dict[str, Any]:
    """The fields of sample ``i`` of the reference timing dataset.

    ``cloud_cover`` double, ``split`` string, ``tile`` int64, ``acq`` timestamp.

    Example:
        >>> reference_fields(1)["split"]
        'test'
    """
    return {
        "cloud_cover": (i % 1000) / 10.0,
        "split": ("train", "test", "validation")[i % 3],
        "tile": i,
        "acq": START + timedelta(minutes=i),
    }


def write_json(path: Path, results: dict[str, Any]) -> None:
    """Write ``results`` as indented JSON at ``path`` (folders created) and say so."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {path}")
