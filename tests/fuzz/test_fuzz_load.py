"""Hypothesis mutation fuzzing of every parser reachable from load(): only TacoErrors escape
from load and every public call after it, and a mutated dataset that loads either fails
verify or serves the original bytes."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz._harness import Target, run_mutation
from tests.fuzz._targets import STRUCTURED
from tests.fuzz.conftest import EXAMPLES

MUTATIONS = st.lists(st.tuples(st.integers(0, 2**20), st.integers(0, 255)), min_size=1, max_size=6)
TRUNCATE = st.one_of(st.none(), st.integers(0, 2**20))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=True,
)


@pytest.mark.parametrize(
    "name", ["taco_header", "eocd_cd", "parquet", "collection", "tacocat", "caf", "taridx"]
)
@FUZZ
@given(mutation=MUTATIONS, truncate=TRUNCATE)
def test_mutated_container_only_raises_taco_errors(
    targets: dict[str, Target], name: str, mutation: list[tuple[int, int]], truncate: int | None
) -> None:
    outcome = run_mutation(targets[name], mutation, truncate)
    assert outcome  # the harness raised AssertionError on a bug; every outcome is named


STRUCTURED_FUZZ = settings(FUZZ, max_examples=max(4, EXAMPLES // 4))
IN_CI = tuple(STRUCTURED)


@pytest.mark.parametrize("name", IN_CI)
@STRUCTURED_FUZZ
@given(mutation=MUTATIONS, truncate=st.one_of(st.none(), st.none(), st.integers(0, 2**20)))
def test_structured_mutation_only_raises_taco_errors(
    structured: dict[str, Target], name: str, mutation: list[tuple[int, int]], truncate: int | None
) -> None:
    outcome = run_mutation(structured[name], mutation, truncate)
    assert outcome
