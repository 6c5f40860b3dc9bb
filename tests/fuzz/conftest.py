"""Fuzz fixtures: pristine datasets of every format, built once per session."""

from __future__ import annotations

import os

import pytest

from tests.fuzz._harness import Target, make_targets
from tests.fuzz._targets import make_structured_targets

EXAMPLES = int(os.environ.get("TACO_FUZZ_EXAMPLES", "40"))
"""Examples per fuzzer: small in CI (all fuzzers well under 2 minutes); raise it outside CI."""


@pytest.fixture(scope="session")
def targets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Target]:
    return make_targets(tmp_path_factory.mktemp("fuzz"))


@pytest.fixture(scope="session")
def structured(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Target]:
    return make_structured_targets(tmp_path_factory.mktemp("fuzz-structured"))
