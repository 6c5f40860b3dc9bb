"""Fixtures of the CLI tests: datasets built once per session, the installed ``taco``.

Every test runs the INSTALLED console script (``<venv>/bin/taco``) in a
subprocess, the way a user does; a missing script is a failure, not a skip.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from taco_gdal.cli.schema import SCHEMAS
from tests.support.datasets import write_dataset

TACO = Path(sys.executable).parent / "taco"


@dataclass(frozen=True)
class Run:
    """One finished ``taco`` run."""

    args: tuple[str, ...]
    code: int
    out: str
    err: str

    def json(self, schema: str | None = None) -> Any:
        """stdout parsed as JSON, validated against ``SCHEMAS[schema]`` when given."""
        document = json.loads(self.out)
        if schema is not None:
            jsonschema.validate(document, SCHEMAS[schema])
        return document


def taco(*args: str | os.PathLike[str], cwd: Path | None = None, check: bool = True) -> Run:
    """Run the installed ``taco`` with ``args``; with ``check``, exit code 0 is required."""
    assert TACO.is_file(), f"the console script {TACO} is missing: pip install -e . first"
    argv = [str(TACO), *(os.fspath(a) for a in args)]
    env = {k: v for k, v in os.environ.items() if k != "TACO_DEBUG"}
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=env, timeout=120)
    run = Run(tuple(argv[1:]), proc.returncode, proc.stdout, proc.stderr)
    if check:
        assert run.code == 0, f"taco {' '.join(run.args)} -> {run.code}\n{run.err}"
    return run


@pytest.fixture(scope="session")
def datasets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """flat and 2level ZIPs, a 2level FOLDER, a 2level TACOCAT, a 3level ZIP."""
    root = tmp_path_factory.mktemp("cli-datasets")
    return {
        "flat": write_dataset(root, "flat", "zip"),
        "2level": write_dataset(root, "2level", "zip"),
        "folder": write_dataset(root, "2level", "folder"),
        "tacocat": write_dataset(root, "2level", "tacocat"),
        "3level": write_dataset(root, "3level", "zip"),
    }
