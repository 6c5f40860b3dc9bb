"""Build hook for the one C extension; the project's metadata is in pyproject.toml.

``taco_gdal._crc32c`` (CRC-32C by carry-less multiplication) is optional: where it
cannot be compiled the package installs without it and CRC-32C comes from
google-crc32c (``taco_gdal/format/checksum.py`` chooses at run time).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "taco_gdal._crc32c",
            sources=["taco_gdal/_crc32c.c"],
            optional=True,
            extra_compile_args=["-O2"],
        )
    ]
)
