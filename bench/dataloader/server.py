"""The Range server in its own process, so it never competes with the DataLoader for a GIL.

The benchmark's main process collates batches; a server thread in the same
process would share its GIL with them (8 workers mean 8 requests in flight),
slowing every loop alike and hiding the difference in requests.  The server
process answers three commands over a pipe: ``clear``, ``records`` and ``stop``.
"""

from __future__ import annotations

import multiprocessing
from multiprocessing.connection import Connection
from pathlib import Path
from types import TracebackType
from typing import Any

from tests.support.servers.log import RequestRecord
from tests.support.servers.range_server import RangeServer
from tests.support.servers.tls import TlsFiles


def _serve(root: Path, delay: float, tls: TlsFiles, conn: Connection) -> None:
    with RangeServer(root=root, delay=delay) as server:
        https = server.start_tls(tls.cert, tls.key)
        conn.send((server.url, https))
        while True:
            command = conn.recv()
            if command == "clear":
                server.log.clear()
                conn.send(None)
            elif command == "records":
                conn.send(server.log.records())
            else:
                conn.send(None)
                return


class ServerProcess:
    """A :class:`RangeServer` (plain HTTP and TLS) running in a spawned process."""

    def __init__(self, root: Path, delay: float, tls: TlsFiles) -> None:
        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        self._proc: Any = context.Process(
            target=_serve, args=(root, delay, tls, child), daemon=True
        )
        self._proc.start()
        self.url, self.https_url = self._conn.recv()
        self.pid: int = self._proc.pid

    def clear(self) -> None:
        self._conn.send("clear")
        self._conn.recv()

    def records(self) -> list[RequestRecord]:
        self._conn.send("records")
        records: list[RequestRecord] = self._conn.recv()
        return records

    def stop(self) -> None:
        self._conn.send("stop")
        self._conn.recv()
        self._proc.join(timeout=30)

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
