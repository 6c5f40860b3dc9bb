"""Pure byte layouts and names of the TACO format: no I/O policy lives here.

* :mod:`.header`  - the 157-byte TACO_HEADER at byte 0 of a TACO ZIP
* :mod:`.zip`     - ZIP records (local header, central directory, EOCD, ZIP64)
* :mod:`.tacocat` - the 128-byte header of the legacy binary ``__TACOCAT__`` file
* :mod:`.vsi`     - GDAL virtual file system paths (``/vsisubfile/``, ``/vsicurl/`` ...)
* :mod:`.names`   - member names, column names and limits defined by the spec
"""
