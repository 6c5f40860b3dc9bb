"""Build hook for the C extensions; the project's metadata is in pyproject.toml.

Both are optional: where one cannot be compiled the package installs without it.
- ``taco_gdal._crc32c`` (CRC-32C and the ZIP CRC-32 by carry-less multiplication);
  without it CRC-32C comes from google-crc32c and the ZIP CRC-32 from ISA-L
  (``taco_gdal/format/checksum.py`` chooses at run time).
- ``taco_gdal._sha256_thread`` (SHA-256 of small members on native threads, with
  OpenSSL's libcrypto and the CPU's SHA extensions), used by the helper process
  and, where no helper process can start (embedded, frozen), by a thread that
  reads the members back from the output; without it the helper digests with
  hashlib, and the ZIP writer digests inline where no helper starts
  (``taco_gdal/write/_digest_thread.py`` chooses at run time).
- ``taco_gdal._xxh3`` (XXH3 of many small samples in one call, by the system's
  libxxhash, opened at import); without it, or without the library, small
  samples take the xxhash wheel (``taco_gdal/format/checksum.py``).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "taco_gdal._crc32c",
            sources=["taco_gdal/_crc32c.c"],
            optional=True,
            extra_compile_args=["-O2"],
        ),
        Extension(
            "taco_gdal._sha256_thread",
            sources=["taco_gdal/_sha256_thread.c"],
            depends=["taco_gdal/_sha256_lanes.h", "taco_gdal/_sha256_scan.h"],
            optional=True,
            libraries=["crypto"],
            extra_compile_args=["-O2", "-pthread"],
            extra_link_args=["-pthread"],
        ),
        Extension(
            "taco_gdal._xxh3",
            sources=["taco_gdal/_xxh3.c"],
            optional=True,
            extra_compile_args=["-O2"],
        ),
    ]
)
