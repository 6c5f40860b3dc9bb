"""Fixtures shared by the writer's integration tests."""

from __future__ import annotations

from typing import Any

import pytest

from taco_gdal.write._output_digests import OutputDigests


@pytest.fixture
def here(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many members each call of the writer's own SHA-256 digesting took: what the
    helper process or the scan thread missed, read back from the output."""
    calls: list[int] = []
    real = OutputDigests._digest_here

    def spy(self: OutputDigests, positions: Any, sizes: Any) -> bytes:
        calls.append(len(positions))
        return real(self, positions, sizes)

    monkeypatch.setattr(OutputDigests, "_digest_here", spy)
    return calls
