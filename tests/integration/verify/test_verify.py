"""verify(): clean files are clean; every kind of damage is named with its code, member and row."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import taco_gdal
from taco_gdal.io.header import read_header, update_header
from taco_gdal.verify import codes
from tests.integration.verify._zipedit import rebuild_zip
from tests.support.datasets import write_dataset
from tests.support.servers.range_server import RangeServer


def _flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("container", ["zip", "folder", "tacocat"])
@pytest.mark.parametrize("level", ["structure", "crc", "full"])
def test_valid_datasets_verify_clean(datasets: dict[str, Path], container: str, level: str) -> None:
    report = taco_gdal.verify(datasets[container], level=level)  # type: ignore[arg-type]
    assert report.ok, str(report)
    assert report.checked["rows"] >= 12
    assert json.loads(json.dumps(report.to_dict()))["ok"] is True
    assert str(report).endswith("OK")


def test_flipped_sample_byte_names_exactly_that_sample(tmp_path: Path) -> None:
    src = write_dataset(tmp_path, "flat", "zip", n=20)
    with zipfile.ZipFile(src) as z:
        info = z.getinfo("DATA/s013")
        start = info.header_offset + 30 + len(info.filename)
    _flip(src, start + info.file_size // 2)
    assert taco_gdal.verify(src, level="structure").ok  # structure does not read the bytes
    report = taco_gdal.verify(src, level="crc")
    assert [(f.code, f.member) for f in report.failures] == [(codes.CRC_MISMATCH, "DATA/s013")]
    failure = report.failures[0]
    assert failure.row_id == "level0:13 (s013)"
    assert failure.expected == f"0x{info.CRC:08x}" and failure.found != failure.expected
    assert "s013" in str(report)


def test_flipped_metadata_byte_is_named(tmp_path: Path) -> None:
    src = write_dataset(tmp_path, "flat", "zip", n=5)
    entry = read_header(str(src)).entries[-1]  # COLLECTION.json
    _flip(src, entry.offset + 10)
    report = taco_gdal.verify(src, level="crc")
    assert (codes.CRC_MISMATCH, "COLLECTION.json") in [(f.code, f.member) for f in report.failures]


def test_shifted_offset_is_invalid_offset(tmp_path: Path) -> None:
    src = write_dataset(tmp_path, "flat", "zip", n=4)
    with zipfile.ZipFile(src) as z:
        table = pq.read_table(z.open("METADATA/level0.parquet"))
    offsets = table.column("internal:offset").to_pylist()
    offsets[1], offsets[2] = offsets[2], offsets[1]  # swapped: each row serves the other's bytes
    i = table.column_names.index("internal:offset")
    broken = table.set_column(i, "internal:offset", pa_array(offsets))
    out = rebuild_zip(src, tmp_path / "swapped.tacozip", {"METADATA/level0.parquet": _pq(broken)})
    report = taco_gdal.verify(out, level="structure")
    assert {(f.code, f.row_id) for f in report.failures} == {
        (codes.INVALID_OFFSET, "level0:1 (s001)"),
        (codes.INVALID_OFFSET, "level0:2 (s002)"),
    }


def test_folder_meta_mismatch(tmp_path: Path) -> None:
    src = write_dataset(tmp_path, "2level", "folder")
    meta = src / "DATA" / "tile001" / "__meta__"
    table = pq.read_table(meta)
    pq.write_table(table.slice(0, 2), meta)
    report = taco_gdal.verify(src, level="structure")
    assert [(f.code, f.member) for f in report.failures] == [
        (codes.META_MISMATCH, "DATA/tile001/__meta__")
    ]


def test_folder_missing_file_and_size(tmp_path: Path) -> None:
    src = write_dataset(tmp_path, "flat", "folder")
    (src / "DATA" / "s001").unlink()
    report = taco_gdal.verify(src, level="crc")
    assert [(f.code, f.row_id) for f in report.failures] == [
        (codes.MISSING_MEMBER, "level0:1 (s001)")
    ]


def test_interrupted_header_update_is_found_and_repaired(tmp_path: Path) -> None:
    src = write_dataset(tmp_path, "flat", "zip")
    data = bytearray(src.read_bytes())
    data[42] = 1  # a payload changed by write 1 while both CRCs are old: a kill before write 2
    src.write_bytes(bytes(data))
    report = taco_gdal.verify(src, level="structure")
    assert report.codes == {codes.BAD_HEADER}
    with zipfile.ZipFile(src) as z:
        assert z.testzip() == "TACO_HEADER"
    assert taco_gdal.verify(src, level="crc", repair=True).ok
    with zipfile.ZipFile(src) as z:
        assert z.testzip() is None


def test_header_entry_pointing_elsewhere(tmp_path: Path) -> None:
    src = write_dataset(tmp_path, "flat", "zip")
    entries = list(read_header(str(src)).entries)
    entries[0] = type(entries[0])(entries[0].offset + 1, entries[0].length)
    update_header(str(src), entries)
    report = taco_gdal.verify(src, level="structure")
    assert codes.HEADER_ENTRY_MISMATCH in report.codes


def test_tacocat_row_pointing_elsewhere(tmp_path: Path) -> None:
    cat = write_dataset(tmp_path, "flat", "tacocat")
    table = pq.read_table(cat / "level0.parquet")
    sizes = table.column("internal:size").to_pylist()
    sizes[0] += 1
    i = table.column_names.index("internal:size")
    pq.write_table(table.set_column(i, "internal:size", pa_array(sizes)), cat / "level0.parquet")
    report = taco_gdal.verify(cat, level="structure")
    assert [(f.code, f.row_id) for f in report.failures] == [
        (codes.INVALID_OFFSET, "level0:0 (s000)")
    ]


def test_remote_verify_over_range_server(tmp_path: Path) -> None:
    src = write_dataset(tmp_path, "2level", "zip")
    bad = tmp_path / "bad.tacozip"
    shutil.copy(src, bad)
    with zipfile.ZipFile(bad) as z:
        info = z.getinfo("DATA/tile002/b03")
    _flip(bad, info.header_offset + 30 + len(info.filename) + 5)
    with RangeServer(root=tmp_path) as server:
        clean = taco_gdal.verify(f"{server.url}/{src.relative_to(tmp_path)}", level="crc")
        broken = taco_gdal.verify(f"{server.url}/bad.tacozip", level="crc")
        gets = [r for r in server.log.records() if r.method == "GET"]
    assert clean.ok, str(clean)
    assert [(f.code, f.member) for f in broken.failures] == [
        (codes.CRC_MISMATCH, "DATA/tile002/b03")
    ]
    assert gets, "the verification went through the server"


def test_unknown_level_is_refused(datasets: dict[str, Path]) -> None:
    with pytest.raises(taco_gdal.TacoValidationError, match="structure"):
        taco_gdal.verify(datasets["zip"], level="sha")  # type: ignore[arg-type]


def pa_array(values: list[int]) -> object:
    import pyarrow as pa

    return pa.array(values, pa.int64())


def _pq(table: object) -> bytes:
    import io

    sink = io.BytesIO()
    pq.write_table(table, sink)  # type: ignore[arg-type]
    return sink.getvalue()


def test_plugin_containers_answer_through_the_default_hook(tmp_path: Path) -> None:
    import tarfile

    from taco_caf.write import write_caf
    from taco_taridx.write import write_taridx
    from tests.support.datasets import make_geotiff

    files = []
    for i in range(3):
        make_geotiff(tmp_path / f"img{i}.tif", i)
        files.append(tmp_path / f"img{i}.tif")
    caf = write_caf({f"m{i}.tif": p for i, p in enumerate(files)}, tmp_path / "data.caf")
    with tarfile.open(tmp_path / "train.tar", "w", format=tarfile.PAX_FORMAT) as tar:
        for i, path in enumerate(files):
            tar.add(path, arcname=f"k{i}.tif")
    taridx = write_taridx(tmp_path / "train.tar", tmp_path / "train.taridx")
    for path in (caf, taridx):
        for level in ("structure", "crc", "full"):
            report = taco_gdal.verify(path, level=level)  # type: ignore[arg-type]
            assert report.ok and report.checked["rows"] == 3, str(report)
    (tmp_path / "train.tar").write_bytes((tmp_path / "train.tar").read_bytes()[:1500])
    report = taco_gdal.verify(taridx, level="structure")  # the shard no longer holds the rows
    assert codes.INVALID_OFFSET in report.codes or codes.UNREADABLE in report.codes, str(report)


def test_missing_location_is_an_io_error(tmp_path: Path) -> None:
    for check in (taco_gdal.verify, taco_gdal.validate):
        with pytest.raises(taco_gdal.TacoIOError, match="does not exist"):
            check(tmp_path / "absent.tacozip")


def _as_zip64(src: Path, dst: Path, classic_entries: int | None = None) -> Path:
    """``src`` with ZIP64 end records; the classic EOCD says 'see ZIP64' or ``classic_entries``."""
    from taco_gdal.format import zip as zipfmt

    data = src.read_bytes()
    with zipfile.ZipFile(src) as z:
        count = len(z.infolist())
    eocd_at = data.rindex(b"PK\x05\x06")
    eocd = zipfmt.EndOfCentralDirectory.unpack(data[eocd_at:], "src")
    z64_at = eocd_at
    z64 = zipfmt.Zip64EndOfCentralDirectory(count, eocd.cd_size, eocd.cd_offset).pack()
    locator = zipfmt.Zip64Locator(z64_at).pack()
    classic = zipfmt.EndOfCentralDirectory(0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF).pack()
    if classic_entries is not None:
        classic = zipfmt.EndOfCentralDirectory(classic_entries, eocd.cd_size, eocd.cd_offset).pack()
    dst.write_bytes(data[:eocd_at] + z64 + locator + classic)
    return dst


def test_zip64_end_records_must_agree_with_the_classic_eocd(tmp_path: Path) -> None:
    src = write_dataset(tmp_path, "flat", "zip")
    good = _as_zip64(src, tmp_path / "z64.tacozip")
    assert taco_gdal.verify(good, level="crc").ok
    with zipfile.ZipFile(src) as z:
        count = len(z.infolist())
    bad = _as_zip64(src, tmp_path / "z64bad.tacozip", classic_entries=count - 1)
    report = taco_gdal.verify(bad, level="structure")
    assert [(f.code, f.found) for f in report.failures] == [
        (codes.BAD_CENTRAL_DIRECTORY, count - 1)
    ]


def test_overlapping_members_are_reported(tmp_path: Path) -> None:
    from taco_gdal.format import zip as zipfmt

    src = write_dataset(tmp_path, "flat", "zip")
    data = bytearray(src.read_bytes())
    with zipfile.ZipFile(src) as z:
        infos = {i.filename: i for i in z.infolist()}
    eocd = zipfmt.EndOfCentralDirectory.unpack(bytes(data[data.rindex(b"PK\x05\x06") :]), "x")
    pos = eocd.cd_offset
    while pos < eocd.cd_offset + eocd.cd_size:  # grow s001's size in its central directory entry
        entry, nxt = zipfmt.CentralDirectoryEntry.unpack_from(bytes(data), pos)
        if entry.name == b"DATA/s001":
            grown = infos["DATA/s001"].file_size + 100
            data[pos + 20 : pos + 28] = grown.to_bytes(4, "little") * 2
        pos = nxt
    src.write_bytes(bytes(data))
    report = taco_gdal.verify(src, level="structure")
    assert codes.OVERLAPPING_MEMBERS in report.codes
    assert any(
        f.member == "DATA/s001" for f in report.failures if f.code == codes.OVERLAPPING_MEMBERS
    )


def test_tacocat_row_moved_to_another_part_is_caught(tmp_path: Path) -> None:
    """Found by scripts/fuzz.py: parts share their layout, so a row whose source_file names
    the other part finds a member at the same offset; verify must still name the row."""
    import pyarrow as pa

    cat = write_dataset(tmp_path, "flat", "tacocat")
    table = pq.read_table(cat / "level0.parquet")
    sources = table.column("internal:source_file").to_pylist()
    other = next(s for s in sources if s != sources[0])
    sources[0] = other
    i = table.column_names.index("internal:source_file")
    pq.write_table(table.set_column(i, "internal:source_file", pa.array(sources)),
                   cat / "level0.parquet")  # fmt: skip
    report = taco_gdal.verify(cat, level="structure")
    assert [(f.code, f.row_id) for f in report.failures] == [
        (codes.MISSING_MEMBER, "level0:0 (s000)")
    ]
