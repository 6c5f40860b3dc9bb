"""Build Tortilla trees from nested shapes in one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from taco_gdal.model import Sample, Tortilla


def tree(blob: Path, shape: list[Any], prefix: str = "", **fields: Any) -> Tortilla:
    """A Tortilla from a nested shape: a str is a FILE id, ``(id, [shape])`` a FOLDER."""
    samples = []
    for node in shape:
        if isinstance(node, str):
            samples.append(Sample(node, blob, **fields))
        else:
            node_id, children = node
            samples.append(Sample(node_id, tree(blob, children, **fields), **fields))
    return Tortilla(samples)
