"""Naming rules of the data model: sample ids and metadata keys (spec 5.5.1, 7.1.2)."""

from __future__ import annotations

import re
from typing import Final

from taco_gdal.errors import TacoValidationError
from taco_gdal.format.names import INTERNAL_PREFIX, PADDING_PREFIX, PATH, PROTECTED_COLUMNS

__all__ = ["KEY_PATTERN", "check_key", "check_sample_id"]

KEY_PATTERN: Final = re.compile(r"^[a-zA-Z0-9_]+(?:[:][\w]+)?$")
"""Metadata keys: alphanumeric plus ``_``, optionally one ``namespace:`` prefix."""

_FORBIDDEN_ID_CHARS: Final = ("/", "\\", ":")


def check_sample_id(sample_id: object) -> str:
    """Return ``sample_id`` if it is a valid sample id (spec 5.5.1), else raise."""
    if not isinstance(sample_id, str):
        raise TacoValidationError(
            f"sample id: expected a string, found {type(sample_id).__name__} {sample_id!r}"
        )
    if not sample_id:
        raise TacoValidationError("sample id: expected a non-empty string, found ''")
    for char in _FORBIDDEN_ID_CHARS:
        if char in sample_id:
            raise TacoValidationError(
                f"sample id {sample_id!r}: must not contain {char!r} (ids become path "
                "components in ZIP and FOLDER containers; ':' is the namespace separator)"
            )
    if sample_id.startswith("__"):
        raise TacoValidationError(
            f"sample id {sample_id!r}: must not start with '__' (reserved for padding "
            f"samples '{PADDING_PREFIX}N', which only Tortilla(pad_to=...) creates)"
        )
    if sample_id in (".", ".."):
        raise TacoValidationError(f"sample id {sample_id!r}: '.' and '..' are not valid ids")
    return sample_id


def check_key(key: object, where: str) -> str:
    """Return ``key`` if it may name a metadata column (see KEY_PATTERN), else raise."""
    if not isinstance(key, str) or KEY_PATTERN.match(key) is None:
        raise TacoValidationError(
            f"{where}: metadata key {key!r} is not valid; expected alphanumeric and '_', "
            "optionally with one 'namespace:' prefix (e.g. 'cloud_cover', 'stac:crs')"
        )
    if key in PROTECTED_COLUMNS or key == PATH or key.startswith(INTERNAL_PREFIX):
        raise TacoValidationError(
            f"{where}: metadata key {key!r} is reserved (core fields id/type/path and "
            f"'{INTERNAL_PREFIX}*' columns are set by taco_gdal)"
        )
    return key
