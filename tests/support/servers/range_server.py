"""A threaded HTTP/1.1 server on 127.0.0.1 that honours ``Range``, logs and misbehaves on demand.

It serves either the files under a folder, or whatever an upstream server on
127.0.0.1 answers (then it is a counting proxy, used in front of the S3
emulator).  Every request is logged (method, path, Range, status, body bytes
sent).  ``delay`` adds a fixed wait before each answer (a stand-in for a cloud
round trip); :meth:`RangeServer.fail` answers an error status N times and
:meth:`RangeServer.drop` closes the connection in the middle of a body.

Example:
    >>> with RangeServer(root=folder) as server:  # doctest: +SKIP
    ...     url = server.url + "/data.tacozip"
"""

from __future__ import annotations

import email.utils
import http.client
import os
import posixpath
import socket
import ssl
import threading
import time
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType

from tests.support.servers.faults import Fault, FaultPlan
from tests.support.servers.log import RequestLog, RequestRecord
from tests.support.servers.ranges import ByteRange, Unsatisfiable, parse_range

HOST = "127.0.0.1"
_BLOCK = 64 * 1024
_HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailers",
     "transfer-encoding", "upgrade", "content-length"}
)  # fmt: skip


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else small last segments wait for delayed ACKs (40 ms)
    server: _Server

    def log_message(self, format: str, *args: object) -> None:  # the RequestLog is the log
        return

    # --- entry points -------------------------------------------------------
    def do_GET(self) -> None:
        self._handle()

    def do_HEAD(self) -> None:
        self._handle()

    def do_PUT(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    def _handle(self) -> None:
        owner = self.server.owner
        self._status = 0
        self._sent = 0
        path = urllib.parse.urlsplit(self.path).path
        arrival = owner.log.begin()
        try:
            if owner.delay > 0:
                time.sleep(owner.delay)
            fault = owner.faults.take(self.command, path, "status")
            if fault is not None:
                self._send_bytes(fault.status, f"injected {fault.status}\n".encode(), {})
            elif owner.upstream is not None:
                self._proxy(owner.upstream, path)
            else:
                self._serve_file(path)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        finally:
            owner.log.append(
                RequestRecord(
                    self.command, path, self.headers.get("Range"), self._status, self._sent
                ),
                arrival,
            )

    # --- answers ------------------------------------------------------------
    def _start(self, status: int, headers: dict[str, str], length: int) -> None:
        self._status = status
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(length))
        self.end_headers()

    def _send_bytes(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self._start(status, headers, len(body))
        if self.command != "HEAD":
            self._write(iter([body]), len(body), None)

    def _write(self, blocks: Iterator[bytes], length: int, path: str | None) -> None:
        """Send the body; ``path`` given: a planned drop fault may cut it short."""
        fault = None if path is None else self.server.owner.faults.take("GET", path, "drop", length)
        limit = None if fault is None else fault.after_bytes
        for block in blocks:
            if limit is not None and self._sent + len(block) >= limit:
                self.wfile.write(block[: max(0, limit - self._sent)])
                self._sent = limit
                self._hang_up()
                return
            self.wfile.write(block)
            self._sent += len(block)

    def _hang_up(self) -> None:
        self.wfile.flush()
        self.close_connection = True
        self.connection.shutdown(socket.SHUT_RDWR)

    def _serve_file(self, path: str) -> None:
        target = self.server.owner.resolve(path)
        if target is None or not target.is_file():
            self._send_bytes(404, b"not found\n", {})
            return
        stat = target.stat()
        size = stat.st_size
        owner = self.server.owner
        etag = f'"{size:x}-{stat.st_mtime_ns:x}"'
        headers = {"Accept-Ranges": "bytes", "Content-Type": "application/octet-stream"}
        if owner.etag:
            headers["ETag"] = etag
        if owner.last_modified:
            headers["Last-Modified"] = email.utils.formatdate(int(stat.st_mtime), usegmt=True)
        if not self._preconditions_hold(etag, int(stat.st_mtime)):
            self._send_bytes(412, b"precondition failed\n", {})
            return
        try:
            span = parse_range(self.headers.get("Range"), size)
        except Unsatisfiable:
            self._send_bytes(416, b"", {"Content-Range": f"bytes */{size}"})
            return
        if span is None:
            span, status = ByteRange(0, size - 1), 200
        else:
            status = 206
            headers["Content-Range"] = f"bytes {span.first}-{span.last}/{size}"
        self._start(status, headers, max(0, span.length))
        if self.command == "GET" and size:
            self._send_file(target, span, path)

    def _preconditions_hold(self, etag: str, mtime: int) -> bool:
        """RFC 9110 ``If-Match`` / ``If-Unmodified-Since``, for the validators this server sends."""
        owner = self.server.owner
        if_match = self.headers.get("If-Match")
        if if_match is not None and owner.etag:
            tags = [t.strip() for t in if_match.split(",")]
            return "*" in tags or etag in tags
        since = self.headers.get("If-Unmodified-Since")
        if since is not None and owner.last_modified:
            try:
                limit = email.utils.parsedate_to_datetime(since).timestamp()
            except (TypeError, ValueError):
                return True  # an invalid date is ignored (RFC 9110 13.1.4)
            return mtime <= limit
        return True

    def _send_file(self, target: Path, span: ByteRange, path: str) -> None:
        """``socket.sendfile`` the span (zero-copy on plain TCP), cut short by a drop fault."""
        fault = self.server.owner.faults.take("GET", path, "drop", span.length)
        length = span.length if fault is None else fault.after_bytes
        with target.open("rb") as f:
            while self._sent < length:
                sent = self.connection.sendfile(f, span.first + self._sent, length - self._sent)
                if sent == 0:
                    break
                self._sent += sent
        if fault is not None:
            self._hang_up()

    def _proxy(self, upstream: tuple[str, int], path: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
        conn = http.client.HTTPConnection(*upstream, timeout=30)
        try:
            conn.request(self.command, self.path, body=body, headers=headers)
            answer = conn.getresponse()
            data = answer.read()
            kept = {k: v for k, v in answer.getheaders() if k.lower() not in _HOP_BY_HOP}
        finally:
            conn.close()
        announced = int(answer.getheader("Content-Length") or len(data))
        self._start(answer.status, kept, announced if self.command == "HEAD" else len(data))
        if self.command != "HEAD" and data:
            blocks = iter([data[i : i + _BLOCK] for i in range(0, len(data), _BLOCK)])
            self._write(blocks, len(data), path if self.command == "GET" else None)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: RangeServer


class RangeServer:
    """The server: ``start()``/``stop()`` or use as a context manager.

    Args:
        root: folder whose files are served (paths map below it, no listing).
        upstream: ``(host, port)`` of a server to forward to instead (a counting proxy).
        delay: seconds to wait before answering each request.
        etag: send ``ETag`` (and honour ``If-Match``).
        last_modified: send ``Last-Modified`` (and honour ``If-Unmodified-Since``).
    """

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        upstream: tuple[str, int] | None = None,
        delay: float = 0.0,
        etag: bool = True,
        last_modified: bool = True,
    ) -> None:
        if (root is None) == (upstream is None):
            raise ValueError("give exactly one of root= (serve files) or upstream= (proxy)")
        self.root = Path(root).resolve() if root is not None else None
        self.upstream = upstream
        self.delay = delay
        self.etag = etag
        self.last_modified = last_modified
        self.log = RequestLog()
        self.faults = FaultPlan()
        self._server: _Server | None = None
        self._tls_server: _Server | None = None
        self._threads: list[threading.Thread] = []

    # --- lifecycle ------------------------------------------------------------
    def _listen(self, context: ssl.SSLContext | None) -> _Server:
        server = _Server((HOST, 0), _Handler)
        server.owner = self
        if context is not None:
            server.socket = context.wrap_socket(server.socket, server_side=True)
        thread = threading.Thread(target=server.serve_forever, name="range-server", daemon=True)
        thread.start()
        self._threads.append(thread)
        return server

    def start(self) -> RangeServer:
        self._server = self._listen(None)
        return self

    def start_tls(self, cert: str | os.PathLike[str], key: str | os.PathLike[str]) -> str:
        """Also listen with TLS (same files, log, delay and faults); return the https URL."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self._tls_server = self._listen(context)
        return f"https://{HOST}:{self._tls_server.server_address[1]}"

    def stop(self) -> None:
        for server in (self._server, self._tls_server):
            if server is not None:
                server.shutdown()
                server.server_close()
        self._server = self._tls_server = None
        for thread in self._threads:
            thread.join(timeout=10)
        self._threads.clear()

    def __enter__(self) -> RangeServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("server not started")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    # --- behaviour ------------------------------------------------------------
    def reset(self) -> None:
        """Forget the log, the planned faults and the delay."""
        self.log.clear()
        self.faults.clear()
        self.delay = 0.0

    def fail(
        self, path: str, times: int | None = 1, status: int = 503, methods: str = "GET,HEAD"
    ) -> None:
        """Answer ``status`` to the next ``times`` requests whose path ends with ``path``."""
        self.faults.add(Fault(path, "status", times, status=status, methods=_methods(methods)))

    def drop(self, path: str, times: int | None = 1, after_bytes: int = 1024) -> None:
        """Close the connection after ``after_bytes`` body bytes, ``times`` times."""
        self.faults.add(
            Fault(path, "drop", times, after_bytes=after_bytes, methods=_methods("GET"))
        )

    def resolve(self, url_path: str) -> Path | None:
        """The file a URL path names under ``root``, or ``None`` if it escapes it."""
        if self.root is None:
            return None
        clean = posixpath.normpath(urllib.parse.unquote(url_path)).lstrip("/")
        if clean.startswith(".."):
            return None
        target = (self.root / clean).resolve()
        return target if target.is_relative_to(self.root) else None


def _methods(text: str) -> frozenset[str]:
    return frozenset(m.strip().upper() for m in text.split(",") if m.strip())
