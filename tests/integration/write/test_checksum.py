"""create(..., checksum=...): a per-sample digest column computed in the same pass as the copy.

Every digest is recomputed here from the source bytes with the libraries
directly (hashlib, xxhash, google_crc32c), and the ZIP CRC-32s are checked by
``zipfile``, so the writer's one-pass copy is checked against independent code
on every copy path: small files, large dense files (read-ahead pipeline), sparse
files (holes kept), ``/vsisubfile/`` ranges and ``/vsimem/`` (VSI) sources.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import taco_gdal
from taco_gdal.errors import TacoValidationError
from taco_gdal.format.names import CHECKSUM, CHECKSUM_ALGORITHMS, LOCAL_META
from taco_gdal.model import Sample, Taco, Tortilla
from taco_gdal.write import create, export
from taco_gdal.write._sources import read_folder_metadata, read_zip_metadata
from taco_gdal.write.zipstream import BLOCK_SIZE, LOCAL_BLOCK
from tests.support.digests import independent_digest


def level_tables(path: Path) -> list[pa.Table]:
    read = read_zip_metadata if path.suffix else read_folder_metadata
    return read(path).levels


def _sources(folder: Path) -> dict[str, bytes]:
    """Samples of every size class: tiny, empty, local block + 1, remote block + 1, 2.5 remote
    blocks, sparse (every copy path of the ZIP writer and of the FOLDER copy)."""
    folder.mkdir()
    contents = {
        "tiny": b"abc",
        "empty": b"",
        "local1": os.urandom(LOCAL_BLOCK + 1),
        "block1": os.urandom(BLOCK_SIZE + 1),
        "large": os.urandom(BLOCK_SIZE * 2 + BLOCK_SIZE // 2),
    }
    for name, data in contents.items():
        (folder / name).write_bytes(data)
    sparse = folder / "sparse"
    with open(sparse, "wb") as f:  # a hole of 2 blocks between two data blocks
        f.write(b"head" * 1024)
        f.seek(BLOCK_SIZE * 2, os.SEEK_CUR)
        f.write(b"tail" * 1024)
    contents["sparse"] = sparse.read_bytes()
    return contents


def _taco(folder: Path, contents: dict[str, bytes]) -> Taco:
    names = list(contents)

    def files(chosen: list[str]) -> Tortilla:
        samples = [
            Sample(i, folder / n, k=j) for j, (i, n) in enumerate(zip("abc", chosen, strict=True))
        ]
        return Tortilla(samples, pad_to=4)

    def inner() -> Tortilla:
        return Tortilla([Sample("x", folder / "tiny", k=0), Sample("y", folder / "large", k=1)])

    roots = [
        Sample("r0", Tortilla([Sample("f", files(names[:3])), Sample("g", inner())])),
        Sample("r1", Tortilla([Sample("f", files(names[3:])), Sample("g", inner())])),
    ]
    return Taco(
        Tortilla(roots), id="digests", dataset_version="1", description="digest test",
        licenses=["CC0-1.0"], providers=[{"name": "t"}], tasks=["other"],
    )  # fmt: skip


def _expected(folder: Path, table_sources: list[str | None], algorithm: str) -> list[str | None]:
    return [
        None if src is None else independent_digest(algorithm, Path(src).read_bytes())
        for src in table_sources
    ]


@pytest.mark.parametrize("algorithm", CHECKSUM_ALGORITHMS)
@pytest.mark.parametrize("suffix", [".tacozip", ""])
def test_digest_column_matches_source_bytes(tmp_path: Path, algorithm: str, suffix: str) -> None:
    contents = _sources(tmp_path / "src")
    taco = _taco(tmp_path / "src", contents)
    package = taco.metadata()
    out = create(taco, tmp_path / f"out{suffix}", checksum=algorithm, quiet=True)[0]
    stored = level_tables(out)
    for level, table in enumerate(stored):
        sources = package.levels[level].column("path").to_pylist()
        types = table.column("type").to_pylist()
        digests = table.column(CHECKSUM).to_pylist()
        assert digests == _expected(tmp_path, sources, algorithm)
        assert all(d is None for d, t in zip(digests, types, strict=True) if t == "FOLDER")
        padding = [d for d, i in zip(digests, table.column("id").to_pylist(), strict=True)
                   if i.startswith("__TACOPAD__")]  # fmt: skip
        assert padding and all(d is None for d in padding) if level == 2 else True
    if suffix:
        with zipfile.ZipFile(out) as zf:
            assert zf.testzip() is None  # every CRC-32 matches the bytes written


def test_meta_tables_carry_the_digests(tmp_path: Path) -> None:
    contents = _sources(tmp_path / "src")
    out = create(_taco(tmp_path / "src", contents), tmp_path / "out", checksum="xxh3", quiet=True)
    meta = pq.read_table(out[0] / "DATA" / "r1" / "f" / LOCAL_META)
    expected = [independent_digest("xxh3", contents[n]) for n in ("block1", "large", "sparse")]
    assert meta.column(CHECKSUM).to_pylist() == [*expected, None]
    zipped = create(
        _taco(tmp_path / "src", contents), tmp_path / "z.tacozip", checksum="xxh3", quiet=True
    )[0]
    ds = taco_gdal.load(zipped)
    children = ds.data.read("r1").read("f")
    assert list(children[CHECKSUM]) == expected  # the reader hides padding rows


def test_no_checksum_writes_no_column(tmp_path: Path) -> None:
    contents = _sources(tmp_path / "src")
    out = create(_taco(tmp_path / "src", contents), tmp_path / "o.tacozip", quiet=True)[0]
    assert all(CHECKSUM not in t.column_names for t in level_tables(out))


def test_unknown_algorithm_is_refused_before_writing(tmp_path: Path) -> None:
    contents = _sources(tmp_path / "src")
    with pytest.raises(TacoValidationError, match=r"checksum must be one of .*found 'md5'"):
        create(_taco(tmp_path / "src", contents), tmp_path / "o.tacozip", checksum="md5")
    assert not (tmp_path / "o.tacozip").exists()


def test_vsi_sources_are_hashed_in_the_same_pass(tmp_path: Path) -> None:
    from osgeo import gdal

    data = os.urandom(BLOCK_SIZE + 12345)
    vsimem = "/vsimem/test_checksum/big.bin"
    gdal.FileFromMemBuffer(vsimem, data)
    try:
        taco = Taco(
            Tortilla([Sample("m", vsimem), Sample("s", f"/vsisubfile/10_100,{vsimem}")]),
            id="vsi", dataset_version="1", description="d", licenses=["MIT"],
            providers=[{"name": "t"}], tasks=["other"],
        )  # fmt: skip
        for name in ("v.tacozip", "v"):
            out = create(taco, tmp_path / name, checksum="sha256", quiet=True)[0]
            digests = level_tables(out)[0].column(CHECKSUM).to_pylist()
            assert digests == [
                independent_digest("sha256", data),
                independent_digest("sha256", data[10:110]),
            ]
    finally:
        gdal.Unlink(vsimem)


def _by_path(tables: list[pa.Table]) -> dict[str, str | None]:
    """``relative path -> digest`` over all levels, padding rows left out (export drops them)."""
    out: dict[str, str | None] = {}
    for level, table in enumerate(tables):
        keys = table.column("id" if level == 0 else "internal:relative_path").to_pylist()
        for key, value in zip(keys, table.column(CHECKSUM).to_pylist(), strict=True):
            if "__TACOPAD__" not in key:
                out[key] = value
    return out


@pytest.mark.parametrize("suffix", [".tacozip", ""])
def test_export_keeps_or_recomputes_digests(tmp_path: Path, suffix: str) -> None:
    contents = _sources(tmp_path / "src")
    taco = _taco(tmp_path / "src", contents)
    source = create(taco, tmp_path / "src.tacozip", checksum="crc32c", quiet=True)[0]
    ds = taco_gdal.load(source)
    kept = export(ds, tmp_path / f"kept{suffix}", quiet=True)
    fresh = export(ds, tmp_path / f"fresh{suffix}", checksum="xxh3", quiet=True)
    original = _by_path(level_tables(source))
    assert _by_path(level_tables(kept)) == original
    package = taco.metadata().levels
    sources = _by_path(
        [
            t.append_column(CHECKSUM, pa.array(t.column("path").to_pylist(), pa.string()))
            for t in package
        ]
    )
    expected = {
        k: None if v is None else independent_digest("xxh3", Path(v).read_bytes())
        for k, v in sources.items()
    }
    assert _by_path(level_tables(fresh)) == expected


@pytest.mark.parametrize("algorithm", CHECKSUM_ALGORITHMS)
def test_many_small_samples_read_ahead(tmp_path: Path, algorithm: str) -> None:
    # several read-ahead batches of small files (8 threads, 16 files a batch)
    folder = tmp_path / "src"
    folder.mkdir()
    samples = []
    for i in range(70):
        (folder / f"s{i:02d}").write_bytes(os.urandom(i * 997 % LOCAL_BLOCK + 1))
        samples.append(Sample(f"s{i:02d}", folder / f"s{i:02d}"))
    taco = Taco(
        Tortilla(samples), id="small", dataset_version="1", description="small samples",
        licenses=["CC0-1.0"], providers=[{"name": "t"}], tasks=["other"],
    )  # fmt: skip
    out = create(taco, tmp_path / "out.tacozip", checksum=algorithm, quiet=True)[0]
    table = level_tables(out)[0]
    expected = [
        independent_digest(algorithm, (folder / i).read_bytes())
        for i in table.column("id").to_pylist()
    ]
    assert table.column(CHECKSUM).to_pylist() == expected


def test_digest_column_compressed_at_its_own_level_other_columns_unchanged() -> None:
    import io

    from taco_gdal.write._parquet import LEVEL_OPTIONS, parquet_bytes, parquet_options

    options = parquet_options(LEVEL_OPTIONS)
    n = 3000
    table = pa.table({
        "id": [f"s{i}" for i in range(n)],
        "nested": [{"a": i, "b": [float(i), 2.0]} for i in range(n)],
        CHECKSUM: [independent_digest("sha256", i.to_bytes(4, "little")) for i in range(n)],
    })  # fmt: skip
    written = parquet_bytes(table, options)
    at_one_level = io.BytesIO()
    pq.write_table(table, at_one_level, **options)
    ours = pq.ParquetFile(pa.BufferReader(written))
    theirs = pq.ParquetFile(at_one_level).metadata.row_group(0)
    chunks = {ours.metadata.row_group(0).column(i).path_in_schema: i for i in range(4)}
    assert set(chunks) == {"id", "nested.a", "nested.b.list.element", CHECKSUM}
    for path, i in chunks.items():  # every leaf but the digests: the same level, the same bytes
        size = ours.metadata.row_group(0).column(i).total_compressed_size
        assert (size == theirs.column(i).total_compressed_size) == (path != CHECKSUM)
        # no reader prunes by digest: the digest column alone has no min / max
        assert ours.metadata.row_group(0).column(i).is_stats_set == (path != CHECKSUM)
    assert ours.read().equals(table)
    no_digest, direct = table.drop_columns([CHECKSUM]), io.BytesIO()
    pq.write_table(no_digest, direct, **options)  # without digests: written exactly as asked
    assert parquet_bytes(no_digest, options) == direct.getvalue()


def test_a_flat_level_takes_its_leaf_paths_from_the_schema() -> None:
    from taco_gdal.write._parquet import LEVEL_OPTIONS, _leaf_paths, parquet_bytes, parquet_options

    n = 2000
    table = pa.table({
        "id": [f"s{i}" for i in range(n)],
        "kind": pa.array(["a", "b"] * (n // 2)).dictionary_encode(),
        CHECKSUM: [independent_digest("xxh3", i.to_bytes(4, "little")) for i in range(n)],
    })  # fmt: skip
    assert _leaf_paths(table.schema) == ["id", "kind", CHECKSUM]
    written = pq.ParquetFile(pa.BufferReader(parquet_bytes(table, parquet_options(LEVEL_OPTIONS))))
    group = written.metadata.row_group(0)
    for i, path in enumerate(["id", "kind", CHECKSUM]):
        column = group.column(i)
        assert column.path_in_schema == path
        assert column.is_stats_set == (path != CHECKSUM)
        assert ("RLE_DICTIONARY" in column.encodings) == (path != CHECKSUM)
    assert written.read().column(CHECKSUM).to_pylist() == table.column(CHECKSUM).to_pylist()
