"""The CPU's feature flags, read by the tests themselves from ``/proc/cpuinfo``.

Tests that check which code path the package chose on this CPU compare with
these, not with the package's own reading of the same file.
"""

from __future__ import annotations

FOLDING_FLAGS = frozenset({"sse4_2", "pclmulqdq", "avx2", "vpclmulqdq"})
"""What ``taco_gdal._crc32c`` needs to run its folding code."""
SHA_LANE_FLAGS = frozenset({"sha_ni", "ssse3", "sse4_1"})
"""What ``taco_gdal._sha256_thread`` needs to digest in lanes."""


def cpu_flags() -> frozenset[str]:
    """The flags of the first CPU listed; empty where there is no ``/proc/cpuinfo``."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            return next(
                (
                    frozenset(line.split(":", 1)[1].split())
                    for line in f
                    if line.startswith("flags")
                ),
                frozenset(),
            )
    except OSError:
        return frozenset()
