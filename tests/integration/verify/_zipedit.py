"""Rewrite a TACO ZIP with some members replaced: the test tool for broken variants.

Members are copied in their order with :mod:`zipfile` (STORE), then the
TACO_HEADER entries are pointed at the new metadata members with
:func:`taco_gdal.io.header.update_header`, so the result is a well-formed TACO
ZIP whose only difference is the replaced bytes.
"""

from __future__ import annotations

import zipfile
from collections.abc import Mapping
from pathlib import Path

from taco_gdal.format.header import HeaderEntry
from taco_gdal.format.names import COLLECTION_FILE, METADATA_DIR
from taco_gdal.io.header import update_header


def rebuild_zip(src: Path, dst: Path, replace: Mapping[str, bytes]) -> Path:
    """Copy ``src`` to ``dst`` with the members named in ``replace`` given new bytes."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = replace.get(info.filename, zin.read(info.filename))
            out = zipfile.ZipInfo(info.filename, date_time=info.date_time)
            zout.writestr(out, data, compress_type=zipfile.ZIP_STORED)
    with zipfile.ZipFile(dst) as z:
        meta = sorted(i for i in z.infolist() if i.filename.startswith(f"{METADATA_DIR}/"))
        meta = sorted(meta, key=lambda i: i.filename)
        order = [*meta, z.getinfo(COLLECTION_FILE)]
        entries = [HeaderEntry(i.header_offset + 30 + len(i.filename), i.file_size) for i in order]
    update_header(str(dst), entries)
    return dst
