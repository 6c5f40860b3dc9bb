"""Real servers on 127.0.0.1 for remote-read tests and benchmarks.

* :mod:`tests.support.servers.log`: the request log every server keeps.
* :mod:`tests.support.servers.http`: a threaded HTTP server that honours ``Range``
  (single and suffix ranges, ``HEAD``, ``ETag``, 206/416), with a per-request
  delay and fault injection; it can serve a folder or forward to an upstream
  server (a counting proxy).
* :mod:`tests.support.servers.s3`: moto's S3 emulator behind that counting proxy, and the
  GDAL options that reach it.

Nothing here listens anywhere but 127.0.0.1, and every server binds port 0.
"""
