"""Human-readable sizes: ``"4GB"`` -> ``4 * 1024**3`` bytes (binary units, as the reference)."""

from __future__ import annotations

import re
from typing import Final

from taco_gdal.errors import TacoValidationError

__all__ = ["parse_size"]

_UNITS: Final = {
    f"{prefix}{suffix}": 1024**power
    for power, prefix in enumerate(("", "K", "M", "G", "T"))
    for suffix in ("", "B")
}
_PATTERN: Final = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([A-Za-z]*)\s*$")


def parse_size(size: str | int) -> int:
    """Number of bytes in ``size``: an int, or text such as ``"4GB"``, ``"1.5 mb"``, ``"512K"``.

    Units are binary, case and spaces do not matter; TacoValidationError otherwise.
    """
    if isinstance(size, bool):
        raise TacoValidationError(f"split size must be a number of bytes or text, got {size!r}")
    if isinstance(size, int):
        value = size
    else:
        match = _PATTERN.match(size)
        unit = match.group(2).upper() if match else None
        if match is None or unit not in _UNITS:
            raise TacoValidationError(
                f"cannot parse size {size!r}: expected a number followed by one of "
                f"B, KB, MB, GB, TB (e.g. '4GB')"
            )
        value = int(float(match.group(1)) * _UNITS[unit])
    if value <= 0:
        raise TacoValidationError(f"size must be positive, got {size!r}")
    return value
