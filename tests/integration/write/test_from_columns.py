"""``Tortilla.from_columns`` writes the bytes the same samples built one by one write.

ZIPs are compared byte for byte with the DOS date and time of every member
zeroed (the writer stamps the time of writing, so two writes a second apart
differ there and nowhere else); FOLDER outputs file by file.
"""

from __future__ import annotations

import hashlib
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from taco_gdal.errors import TacoIOError, TacoSchemaError, TacoValidationError
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.write import create

N = 300
COLLECTION = {
    "id": "columns",
    "dataset_version": "1",
    "description": "object and column samples",
    "licenses": ["CC0-1.0"],
    "providers": [{"name": "tests"}],
    "tasks": ["other"],
}


def zip_digest(path: Path) -> str:
    """sha256 of a ZIP with each member's DOS time and date zeroed (local and central)."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
    for info in infos:
        assert data[info.header_offset : info.header_offset + 4] == b"PK\x03\x04"
        data[info.header_offset + 10 : info.header_offset + 14] = bytes(4)
    position = data.find(b"PK\x01\x02")
    for _ in infos:
        assert data[position : position + 4] == b"PK\x01\x02"
        data[position + 12 : position + 16] = bytes(4)
        name, extra, comment = struct.unpack_from("<HHH", data, position + 28)
        position += 46 + name + extra + comment
    return hashlib.sha256(data).hexdigest()


def folder_digests(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    folder = tmp_path_factory.mktemp("sources")
    paths = []
    for i in range(N):
        path = folder / f"f{i}.bin"
        path.write_bytes(i.to_bytes(4, "little") * (1 + i % 7))
        paths.append(str(path))
    return paths


def _columns(n: int) -> dict[str, list[object]]:
    return {
        "cloud": [float(i % 100) / 3 for i in range(n)],
        "count": [i * 7 for i in range(n)],
        "split": ["train" if i % 3 else "test" for i in range(n)],
        "note": [None if i % 5 else f"n{i}" for i in range(n)],
    }


def _object_samples(paths: list[str], columns: dict[str, list[object]]) -> list[Sample]:
    return [
        Sample(f"s{i:05d}", path, **{k: v[i] for k, v in columns.items()})
        for i, path in enumerate(paths)
    ]


def _table(columns: dict[str, list[object]]) -> pa.Table:
    # the types Sample infers: float -> double, int -> int64, str -> string
    schema = pa.schema(
        [
            ("cloud", pa.float64()),
            ("count", pa.int64()),
            ("split", pa.string()),
            ("note", pa.string()),
        ]
    )
    return pa.table(columns, schema=schema)


def _write_both(
    tmp_path: Path, objects: Tortilla, columns: Tortilla, ext: str
) -> tuple[Path, Path]:
    a, b = tmp_path / f"objects{ext}", tmp_path / f"columns{ext}"
    create(Taco(objects, **COLLECTION), a, split_size=None, quiet=True)
    create(Taco(columns, **COLLECTION), b, split_size=None, quiet=True)
    return a, b


def test_flat_zip_and_folder_are_byte_identical(tmp_path: Path, files: list[str]) -> None:
    columns = _columns(N)
    ids = pa.array([f"s{i:05d}" for i in range(N)])
    for ext in (".tacozip", ""):
        objects = Tortilla(_object_samples(files, columns), strict_schema=False)
        by_columns = Tortilla.from_columns(ids, pa.array(files), _table(columns))
        a, b = _write_both(tmp_path, objects, by_columns, ext)
        if ext:
            assert zip_digest(a) == zip_digest(b)
            assert a.stat().st_size == b.stat().st_size
        else:
            assert folder_digests(a) == folder_digests(b)
            assert len(folder_digests(a)) > N


def test_nested_column_tortillas_write_the_same_bytes(tmp_path: Path, files: list[str]) -> None:
    """FOLDER samples whose children are given as columns (made into Samples on the way)."""
    fan = 3
    columns = _columns(fan)

    def roots(children: Callable[[list[str]], Tortilla]) -> Tortilla:
        return Tortilla(
            [
                Sample(f"t{r}", children(files[r * fan : (r + 1) * fan]), cloud=float(r))
                for r in range(N // fan)
            ]
        )

    objects = roots(lambda p: Tortilla(_object_samples(p, columns), strict_schema=False))
    ids = np.array([f"s{i:05d}" for i in range(fan)])
    by_columns = roots(lambda p: Tortilla.from_columns(ids, p, _table(columns)))
    a, b = _write_both(tmp_path, objects, by_columns, ".tacozip")
    assert zip_digest(a) == zip_digest(b)


def test_samples_are_made_on_demand(files: list[str]) -> None:
    columns = _columns(4)
    tortilla = Tortilla.from_columns(["a", "b", "c", "d"], files[:4], _table(columns))
    sample = tortilla[2]
    assert (sample.id, sample.type, sample.path, sample.size) == (
        "c",
        "FILE",
        files[2],
        Path(files[2]).stat().st_size,
    )
    assert dict(sample.metadata) == {k: v[2] for k, v in columns.items()}
    assert [s.id for s in tortilla] == ["a", "b", "c", "d"]
    assert tortilla["d"].path == files[3]
    assert tortilla.ids == ("a", "b", "c", "d")
    assert tortilla.sample_types == ("FILE",) * 4
    assert tortilla.size == sum(Path(p).stat().st_size for p in files[:4])
    assert tortilla.column("count").to_pylist() == columns["count"]
    assert tortilla.export_metadata().column_names == [
        "id",
        "type",
        "path",
        "cloud",
        "count",
        "split",
        "note",
    ]
    with pytest.raises(TacoValidationError, match="already belongs to a Tortilla"):
        sample.extend_with({"extra": 1})


def test_relative_paths_become_absolute(files: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    folder = Path(files[0]).parent
    monkeypatch.chdir(folder)
    tortilla = Tortilla.from_columns(["a"], [Path(files[0]).name])
    assert tortilla[0].path == files[0]
    assert Sample("a", Path(files[0]).name).path == files[0]


@pytest.mark.parametrize(
    ("ids", "error", "match"),
    [
        (["a", "a", "b"], TacoValidationError, r"unique among siblings; duplicated: 'a' \(2x\)"),
        (["a", "b/c", "d"], TacoValidationError, "must not contain '/'"),
        (["a", "__x", "d"], TacoValidationError, "must not start with '__'"),
        (["a", "", "d"], TacoValidationError, "non-empty"),
        (
            ["a", None, "d"],
            TacoValidationError,
            r"ids: expected no nulls, found 1 \(first at row 1\)",
        ),
        (["a", "b"], TacoValidationError, "expected as many paths as ids, found 3 paths for 2"),
    ],
)
def test_bad_ids(files: list[str], ids: list[str], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        Tortilla.from_columns(ids, files[:3])


def test_bad_paths_and_metadata(files: list[str], tmp_path: Path) -> None:
    with pytest.raises(TacoIOError, match=r"sample 'b': path .* does not exist"):
        Tortilla.from_columns(["a", "b"], [files[0], str(tmp_path / "missing")])
    with pytest.raises(TacoIOError, match="not a regular file"):
        Tortilla.from_columns(["a"], [str(tmp_path)])
    with pytest.raises(TacoSchemaError, match="metadata has 1 rows, expected 2"):
        Tortilla.from_columns(["a", "b"], files[:2], {"k": [1]})
    with pytest.raises(TacoValidationError, match="metadata key 'id' is reserved"):
        Tortilla.from_columns(["a", "b"], files[:2], {"id": [1, 2]})
    with pytest.raises(TacoValidationError, match="expected at least one sample"):
        Tortilla.from_columns([], [])
