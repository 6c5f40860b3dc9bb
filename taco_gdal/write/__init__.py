"""Writers: streaming ZIP, FOLDER, TACOCAT, TACOLLECTION, export and conversions.

Example:
    >>> from taco_gdal.write import create
    >>> create(taco, "new.tacozip", quiet=True)
    [PosixPath('.../new.tacozip')]
"""

from __future__ import annotations

from taco_gdal.write._size import parse_size
from taco_gdal.write.convert import folder2zip, zip2folder
from taco_gdal.write.create import create
from taco_gdal.write.export import export
from taco_gdal.write.folder_container import write_folder
from taco_gdal.write.tacocat import create_tacocat
from taco_gdal.write.tacollection import create_tacollection
from taco_gdal.write.zip_container import write_zip

__all__ = [
    "create",
    "create_tacocat",
    "create_tacollection",
    "export",
    "folder2zip",
    "parse_size",
    "write_folder",
    "write_zip",
    "zip2folder",
]
