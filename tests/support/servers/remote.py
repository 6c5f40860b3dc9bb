"""One face for both remotes: publish local files, get a URL, read the server's log.

Tests are parametrized over ``http`` (a :class:`RangeServer` serving a folder)
and ``s3`` (moto behind the counting proxy); both give a ``RangeServer`` whose
log, delay and faults the test uses, and the GDAL options that reach it.
"""

from __future__ import annotations

import itertools
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from osgeo import gdal

from taco_gdal import Env
from taco_gdal.io import pinning
from tests.support.servers.log import RequestLog
from tests.support.servers.range_server import RangeServer
from tests.support.servers.s3 import S3Emulator

RemoteKind = Literal["http", "s3"]

TEST_TIMEOUTS = {
    "GDAL_HTTP_TIMEOUT": "20",
    "GDAL_HTTP_CONNECTTIMEOUT": "5",
    "GDAL_HTTP_MAX_RETRY": "3",
    "GDAL_HTTP_RETRY_DELAY": "0.05",
}
"""Short timeouts and back-off so that no test can hang or sleep for long."""

_names = itertools.count()


@dataclass
class Remote:
    """A started remote of one kind."""

    kind: RemoteKind
    server: RangeServer
    root: Path | None = None
    s3: S3Emulator | None = None
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def log(self) -> RequestLog:
        return self.server.log

    def options(self) -> dict[str, str]:
        base = dict(TEST_TIMEOUTS)
        if self.s3 is not None:
            base.update(self.s3.gdal_options())
        base.update(self.extra)
        return base

    def env(self) -> Env:
        """Env with the options that reach this remote (and test timeouts)."""
        return Env(**self.options())

    def publish(self, local: Path, name: str | None = None) -> str:
        """Copy a file or folder to the remote under a fresh prefix; return its URL."""
        prefix = f"p{next(_names):04d}"
        target_name = name or local.name
        if self.s3 is not None:
            if local.is_file():
                self.s3.put(f"{prefix}/{target_name}", local.read_bytes())
            else:
                self.s3.upload(local, f"{prefix}/{target_name}")
            return f"s3://{self.s3.bucket}/{prefix}/{target_name}"
        assert self.root is not None
        target = self.root / prefix / target_name
        target.parent.mkdir(parents=True, exist_ok=True)
        if local.is_file():
            shutil.copy2(local, target)
        else:
            shutil.copytree(local, target)
        return f"{self.server.url}/{prefix}/{target_name}"

    def replace(self, url: str, data: bytes) -> None:
        """Overwrite the published file at ``url`` with ``data`` (a new upload)."""
        if self.s3 is not None:
            key = url.removeprefix(f"s3://{self.s3.bucket}/")
            self.s3.put(key, data)
            return
        assert self.root is not None
        path = self.server.resolve(url.removeprefix(self.server.url))
        assert path is not None
        path.write_bytes(data)

    def fresh(self) -> None:
        """Forget everything between measured steps: log, faults, delay, GDAL cache, pins."""
        self.server.reset()
        gdal.VSICurlClearCache()
        pinning.pins.forget()
