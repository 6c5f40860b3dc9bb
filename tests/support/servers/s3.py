"""moto's S3 emulator on 127.0.0.1, behind a counting proxy, and the GDAL options to reach it.

GDAL talks to the proxy (so every S3 request lands in the same kind of
:class:`~tests.support.servers.log.RequestLog` as plain HTTP, with the same delay and
fault injection); boto3 uploads go straight to moto so they are not counted.
moto does not check signatures, but GDAL must sign (``AWS_NO_SIGN_REQUEST``
gets a 403), hence the dummy keys.

Example:
    >>> with S3Emulator() as s3:  # doctest: +SKIP
    ...     s3.upload(local_folder, "ds")
    ...     with taco_gdal.Env(**s3.gdal_options()):
    ...         gdal.VSIStatL(s3.vsi("ds/data.tacozip"))
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from types import TracebackType
from typing import Any

from tests.support.servers.range_server import HOST, RangeServer

BUCKET = "taco-test"
KEY_ID = "test"
SECRET = "test"
REGION = "us-east-1"


class S3Emulator:
    """A ThreadedMotoServer with one bucket, and a :class:`RangeServer` proxy in front."""

    def __init__(self, bucket: str = BUCKET) -> None:
        self.bucket = bucket
        self._moto: Any = None
        self._client: Any = None
        self.proxy: RangeServer | None = None

    def start(self) -> S3Emulator:
        import boto3
        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto logs every request
        self._moto = ThreadedMotoServer(ip_address=HOST, port=0, verbose=False)
        self._moto.start()
        host, port = self._moto.get_host_and_port()
        self._client = boto3.client(
            "s3",
            endpoint_url=f"http://{host}:{port}",
            aws_access_key_id=KEY_ID,
            aws_secret_access_key=SECRET,
            region_name=REGION,
        )
        self._client.create_bucket(Bucket=self.bucket)
        self.proxy = RangeServer(upstream=(host, port)).start()
        return self

    def stop(self) -> None:
        if self.proxy is not None:
            self.proxy.stop()
            self.proxy = None
        if self._moto is not None:
            self._moto.stop()
            self._moto = None

    def __enter__(self) -> S3Emulator:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def server(self) -> RangeServer:
        if self.proxy is None:
            raise RuntimeError("S3 emulator not started")
        return self.proxy

    def gdal_options(self) -> dict[str, str]:
        """What ``taco_gdal.Env`` needs so that ``/vsis3/`` reaches this emulator."""
        return {
            "AWS_S3_ENDPOINT": f"{HOST}:{self.server.port}",
            "AWS_HTTPS": "NO",
            "AWS_VIRTUAL_HOSTING": "FALSE",
            "AWS_ACCESS_KEY_ID": KEY_ID,
            "AWS_SECRET_ACCESS_KEY": SECRET,
            "AWS_REGION": REGION,
        }

    def put(self, key: str, data: bytes) -> None:
        self._client.put_object(Bucket=self.bucket, Key=key, Body=data)

    def upload(self, local: str | os.PathLike[str], prefix: str) -> str:
        """Upload a file, or a folder recursively, under ``prefix``; return its ``s3://`` URL."""
        source = Path(local)
        if source.is_file():
            key = f"{prefix}/{source.name}"
            self.put(key, source.read_bytes())
            return f"s3://{self.bucket}/{key}"
        for path in sorted(p for p in source.rglob("*") if p.is_file()):
            self.put(f"{prefix}/{path.relative_to(source).as_posix()}", path.read_bytes())
        return f"s3://{self.bucket}/{prefix}"

    def vsi(self, key: str) -> str:
        return f"/vsis3/{self.bucket}/{key}"
