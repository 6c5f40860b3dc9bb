"""The ``taco_gdal:checksum`` column is an extension tacoreader 2.4.21 ignores safely.

A dataset written with ``checksum=`` must look to tacoreader exactly like the
same dataset written without it, except for one more metadata column whose
value, on every FILE row, is the digest of the bytes tacoreader itself reads
through the row's GDAL path (``_refdump`` hashes them with SHA-256, so the
written digest is checked against an independent reader's bytes).
"""

from __future__ import annotations

import pathlib
from typing import Any

import pytest

from taco_gdal.format.names import CHECKSUM
from tests.conformance import _tgbuild, shapes


def _strip_checksum(tree: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[Any]]:
    """The tree without the checksum values, and ``(stored, sha256 of bytes read)`` pairs."""
    pairs: list[Any] = []

    def walk(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for row in rows:
            row = dict(row)
            values = dict(row["values"])
            stored = values.pop(CHECKSUM)
            row["values"] = values
            if row["type"] == "FILE":
                pairs.append((stored, f"sha256:{row['sha256']}"))
            else:
                assert stored is None, f"FOLDER {row['id']!r} has a digest {stored!r}"
                row["children"] = walk(row["children"])
            out.append(row)
        return out

    return walk(tree), pairs


@pytest.mark.parametrize("container", ["zip", "folder"])
@pytest.mark.parametrize("shape", ["flat", "three", "padded"])
def test_tacoreader_reads_a_dataset_with_digests(
    tacoreader_module: Any,
    tacoreader_view: Any,
    files_root: pathlib.Path,
    tmp_path: pathlib.Path,
    shape: str,
    container: str,
) -> None:
    from taco_gdal.write import create

    taco = _tgbuild.taco_of(shapes.shape(shape), files_root)
    suffix = ".tacozip" if container == "zip" else ""
    plain = create(taco, tmp_path / f"plain{suffix}", split_size=None, quiet=True)[0]
    taco = _tgbuild.taco_of(shapes.shape(shape), files_root)
    hashed = create(
        taco, tmp_path / f"hashed{suffix}", split_size=None, quiet=True, checksum="sha256"
    )[0]
    without = tacoreader_view(plain, [])
    with_digest = tacoreader_view(hashed, [])
    tree, pairs = _strip_checksum(with_digest["tree"])
    assert tree == without["tree"]
    assert pairs and all(stored == read for stored, read in pairs)
    assert with_digest["padding"] == without["padding"]
    for depth, columns in with_digest["columns"].items():
        assert [c for c in columns if c != CHECKSUM] == without["columns"][depth]
        assert CHECKSUM in columns
