"""The taco_gdal exception taxonomy.

Every error taco_gdal raises on purpose is a :class:`TacoError`; each subclass
also inherits the builtin a caller would catch (``ValueError``, ``OSError``...).
Messages say what was expected, what was found, and where.
"""

from __future__ import annotations

__all__ = [
    "TacoApproximationWarning",
    "TacoChangedError",
    "TacoChecksumError",
    "TacoDependencyError",
    "TacoError",
    "TacoExistsError",
    "TacoFormatError",
    "TacoIOError",
    "TacoLeakageWarning",
    "TacoNavigationError",
    "TacoPITError",
    "TacoQueryError",
    "TacoSchemaError",
    "TacoValidationError",
    "TacoWarning",
]


class TacoError(Exception):
    """Root of every exception raised by taco_gdal."""


class TacoFormatError(TacoError, ValueError):
    """Bytes on disk or on a server do not have the layout the format requires."""


class TacoIOError(TacoError, OSError):
    """A file or URL could not be opened, read or written."""


class TacoChangedError(TacoIOError):
    """A remote container changed (size or ETag) after its metadata was read."""


class TacoChecksumError(TacoIOError):
    """A sample's bytes do not match the digest stored for it (names sample, container, digests)."""


class TacoDependencyError(TacoError, ImportError):
    """An optional dependency (an extra such as ``taco_gdal[torch]``) is not installed."""


class TacoExistsError(TacoError, FileExistsError):
    """An output already exists and overwriting it was not asked for."""


class TacoValidationError(TacoError, ValueError):
    """A dataset description breaks a rule of the TACO specification."""


class TacoSchemaError(TacoValidationError):
    """Metadata schemas disagree: PIT-2, extensions, concat, TACOCAT inputs."""


class TacoPITError(TacoSchemaError):
    """The hierarchy is not a Position-Invariant Tree (PIT-1, depth limit)."""


class TacoQueryError(TacoError, ValueError):
    """A SQL query or filter cannot run: unknown column, bad range, bad level."""


class TacoNavigationError(TacoError, KeyError, IndexError):
    """``read(key)`` named a sample that does not exist at that level."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class TacoWarning(UserWarning):
    """Something was read or written, but not the way the spec prefers."""


class TacoApproximationWarning(TacoWarning):
    """A statistic was approximated because the dataset lacks what makes it exact."""


class TacoLeakageWarning(TacoWarning):
    """Samples of different splits overlap in space or share bytes (see ``check_splits``)."""
