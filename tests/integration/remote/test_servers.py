"""The test servers themselves: Range semantics, log, delay and faults, S3 through the proxy."""

from __future__ import annotations

import http.client
import time
from pathlib import Path

import pytest
from osgeo import gdal

from taco_gdal import Env
from tests.support.servers.log import RequestLog, RequestRecord
from tests.support.servers.range_server import RangeServer
from tests.support.servers.ranges import ByteRange, Unsatisfiable, parse_range
from tests.support.servers.remote import Remote

pytestmark = [pytest.mark.network, pytest.mark.timeout(60)]

DATA = bytes(range(256)) * 100  # 25,600 bytes


def _request(
    server: RangeServer, method: str, path: str, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request(method, path, headers=headers or {})
        answer = conn.getresponse()
        return answer.status, dict(answer.getheaders()), answer.read()
    finally:
        conn.close()


@pytest.fixture
def server(http_remote: Remote) -> RangeServer:
    assert http_remote.root is not None
    (http_remote.root / "d.bin").write_bytes(DATA)
    return http_remote.server


def test_parse_range_cases() -> None:
    assert parse_range("bytes=0-9", 100) == ByteRange(0, 9)
    assert parse_range("bytes=90-", 100) == ByteRange(90, 99)
    assert parse_range("bytes=-10", 100) == ByteRange(90, 99)
    assert parse_range("bytes=-500", 100) == ByteRange(0, 99)
    assert parse_range("bytes=95-200", 100) == ByteRange(95, 99)
    assert parse_range("bytes=0-1,5-6", 100) is None  # multi-range: whole body
    assert parse_range("items=0-1", 100) is None
    assert parse_range(None, 100) is None
    with pytest.raises(Unsatisfiable):
        parse_range("bytes=100-", 100)
    with pytest.raises(Unsatisfiable):
        parse_range("bytes=-0", 100)


def test_range_get_head_and_errors(server: RangeServer) -> None:
    status, headers, body = _request(server, "GET", "/d.bin", {"Range": "bytes=10-19"})
    assert (status, body) == (206, DATA[10:20])
    assert headers["Content-Range"] == f"bytes 10-19/{len(DATA)}"
    status, headers, body = _request(server, "GET", "/d.bin", {"Range": "bytes=-5"})
    assert (status, body) == (206, DATA[-5:])
    status, headers, body = _request(server, "HEAD", "/d.bin")
    assert (status, body, headers["Content-Length"]) == (200, b"", str(len(DATA)))
    assert headers["ETag"].startswith('"') and headers["Accept-Ranges"] == "bytes"
    status, headers, _ = _request(server, "GET", "/d.bin", {"Range": f"bytes={len(DATA)}-"})
    assert (status, headers["Content-Range"]) == (416, f"bytes */{len(DATA)}")
    assert _request(server, "GET", "/d.bin")[2] == DATA
    assert _request(server, "GET", "/missing.bin")[0] == 404
    assert _request(server, "GET", "/../../etc/passwd")[0] == 404
    log = server.log.records()
    assert [(r.method, r.status) for r in log] == [
        ("GET", 206),
        ("GET", 206),
        ("HEAD", 200),
        ("GET", 416),
        ("GET", 200),
        ("GET", 404),
        ("GET", 404),
    ]
    assert log[0].range == "bytes=10-19" and log[0].bytes_sent == 10
    assert log[2].bytes_sent == 0 and log[4].bytes_sent == len(DATA)


def test_faults_status_then_success(server: RangeServer) -> None:
    server.fail("/d.bin", times=2, status=503)
    statuses = [_request(server, "GET", "/d.bin")[0] for _ in range(3)]
    assert statuses == [503, 503, 200]


def test_fault_drop_mid_body(server: RangeServer) -> None:
    server.drop("/d.bin", times=1, after_bytes=1000)
    with pytest.raises(http.client.IncompleteRead):
        _request(server, "GET", "/d.bin")
    assert server.log.records()[-1].bytes_sent == 1000
    assert _request(server, "GET", "/d.bin")[2] == DATA  # only once


def test_delay_per_request(server: RangeServer) -> None:
    server.delay = 0.2
    start = time.monotonic()
    _request(server, "HEAD", "/d.bin")
    assert time.monotonic() - start >= 0.2


def test_gdal_reads_through_http(http_remote: Remote, tmp_path: Path) -> None:
    source = tmp_path / "g.bin"
    source.write_bytes(DATA)
    url = http_remote.publish(source)
    with Env(GDAL_DISABLE_READDIR_ON_OPEN="EMPTY_DIR"):  # else GDAL first lists the folder
        handle = gdal.VSIFOpenL(f"/vsicurl/{url}", "rb")
    gdal.VSIFSeekL(handle, 1000, 0)
    assert gdal.VSIFReadL(1, 100, handle) == DATA[1000:1100]
    gdal.VSIFCloseL(handle)
    assert [r.method for r in http_remote.log.records()] == ["HEAD", "GET"]


def test_s3_requests_are_counted_by_the_proxy(s3_remote: Remote, tmp_path: Path) -> None:
    source = tmp_path / "o.bin"
    source.write_bytes(DATA)
    url = s3_remote.publish(source)
    vsi = "/vsis3/" + url.removeprefix("s3://")
    with Env(GDAL_DISABLE_READDIR_ON_OPEN="EMPTY_DIR"):  # else GDAL first lists the prefix
        handle = gdal.VSIFOpenL(vsi, "rb")
    assert handle is not None, gdal.GetLastErrorMsg()
    gdal.VSIFSeekL(handle, 20000, 0)
    assert gdal.VSIFReadL(1, 100, handle) == DATA[20000:20100]
    gdal.VSIFCloseL(handle)
    records = s3_remote.log.records()
    assert records, "GDAL's S3 requests must go through the counting proxy"
    assert all(r.path.endswith("/o.bin") and r.status in (200, 206) for r in records), (
        s3_remote.log.describe()
    )
    assert sum(r.bytes_sent for r in records) <= len(DATA)


def test_log_keeps_arrival_order_when_handlers_finish_out_of_order() -> None:
    log = RequestLog(settle=1.0)
    head, get = log.begin(), log.begin()
    log.append(RequestRecord("GET", "/d.bin", None, 200, 10), get)  # finished first
    log.append(RequestRecord("HEAD", "/d.bin", None, 200, 0), head)
    assert [r.method for r in log.records()] == ["HEAD", "GET"]
