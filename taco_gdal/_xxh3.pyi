"""Types of the C extension ``taco_gdal/_xxh3.c`` (XXH3 of many buffers by libxxhash)."""

available: bool
"""True when the system's ``libxxhash`` and its dispatching XXH3 were found at import."""

def many(buffers: list[bytes] | list[bytes | bytearray | memoryview], /) -> list[int]: ...
