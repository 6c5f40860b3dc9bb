"""Rules for the COLLECTION fields a user supplies (spec 5.5.2, reference §3.1 and §5.1)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final, Literal, get_args

from taco_gdal.errors import TacoValidationError

__all__ = [
    "TASKS",
    "TaskType",
    "check_dataset_id",
    "check_licenses",
    "check_string_list",
    "check_tasks",
    "check_text",
    "check_title",
]

TaskType = Literal[
    "regression",
    "classification",
    "scene-classification",
    "detection",
    "object-detection",
    "segmentation",
    "semantic-segmentation",
    "instance-segmentation",
    "panoptic-segmentation",
    "similarity-search",
    "generative",
    "image-captioning",
    "super-resolution",
    "denoising",
    "inpainting",
    "colorization",
    "style-transfer",
    "deblurring",
    "dehazing",
    "foundation-model",
    "other",
]
TASKS: Final[tuple[str, ...]] = get_args(TaskType)
"""The ML task names tacotoolbox 0.26.9 accepts, in its order."""

TITLE_MAX: Final = 250
_DATASET_ID: Final = re.compile(r"[a-z0-9_-]+")
_LICENSE_ID: Final = re.compile(
    r"(?:LicenseRef-|DocumentRef-[A-Za-z0-9.-]+:LicenseRef-)?[A-Za-z0-9][A-Za-z0-9.-]*\+?"
)
_TOKEN: Final = re.compile(r"\s*(\(|\)|[^\s()]+)")
_NON_SPDX: Final = frozenset({"proprietary", "other"})


def check_text(key: str, value: object, *, required: bool = True) -> str | None:
    """A (non-empty, when required) string field."""
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value):
        raise TacoValidationError(f"{key}: expected a non-empty string, found {value!r}")
    return value


def check_dataset_id(value: object) -> str:
    """Dataset ids are lowercase ASCII letters, digits, ``_`` and ``-``."""
    if not isinstance(value, str) or _DATASET_ID.fullmatch(value) is None:
        raise TacoValidationError(
            f"id: expected lowercase letters, digits, '_' and '-' only, found {value!r}"
        )
    return value


def check_title(value: object) -> str | None:
    """Optional title of at most 250 characters."""
    title = check_text("title", value, required=False)
    if title is not None and len(title) > TITLE_MAX:
        raise TacoValidationError(
            f"title: expected at most {TITLE_MAX} characters, found {len(title)}"
        )
    return title


def _license_expression(tokens: list[str], pos: int) -> int:
    """Parse ``term ((AND|OR) term)*`` from ``pos``; return the position after it."""
    pos = _license_term(tokens, pos)
    while pos < len(tokens) and tokens[pos] in ("AND", "OR"):
        pos = _license_term(tokens, pos + 1)
    return pos


def _license_term(tokens: list[str], pos: int) -> int:
    if pos >= len(tokens):
        raise ValueError("expression ends early")
    if tokens[pos] == "(":
        pos = _license_expression(tokens, pos + 1)
        if pos >= len(tokens) or tokens[pos] != ")":
            raise ValueError("missing ')'")
        return pos + 1
    if tokens[pos] in ("AND", "OR", "WITH", ")") or _LICENSE_ID.fullmatch(tokens[pos]) is None:
        raise ValueError(f"unexpected {tokens[pos]!r}")
    pos += 1
    if pos < len(tokens) and tokens[pos] == "WITH":
        if pos + 1 >= len(tokens) or _LICENSE_ID.fullmatch(tokens[pos + 1]) is None:
            raise ValueError("WITH needs an exception id")
        pos += 2
    return pos


def is_license(text: str) -> bool:
    """True for an SPDX id or expression (``MIT``, ``Apache-2.0 OR MIT``, ``GPL-2.0+ WITH
    Classpath-exception-2.0``), ``LicenseRef-*``, or ``proprietary``/``other``.

    Example:
        >>> is_license("CC-BY-4.0"), is_license("MIT OR"), is_license("proprietary")
        (True, False, True)
    """
    if text in _NON_SPDX:
        return True
    tokens = _TOKEN.findall(text)
    if not tokens or "".join(tokens) != re.sub(r"\s+", "", text):
        return False
    try:
        return _license_expression(tokens, 0) == len(tokens)
    except ValueError:
        return False


def check_licenses(value: object) -> list[str]:
    """A non-empty list of SPDX-looking license identifiers or expressions."""
    items = check_string_list("licenses", value)
    if not items:
        raise TacoValidationError("licenses: expected at least one license, found []")
    for position, text in enumerate(items):
        if not is_license(text):
            raise TacoValidationError(
                f"licenses[{position}]: expected an SPDX identifier or expression (e.g. "
                f"'CC-BY-4.0', 'Apache-2.0 OR MIT') or 'proprietary'/'other', found {text!r}"
            )
    return items


def check_tasks(value: object) -> list[str]:
    """A non-empty list of task names from :data:`TASKS`."""
    items = check_string_list("tasks", value)
    if not items:
        raise TacoValidationError("tasks: expected at least one task, found []")
    for position, task in enumerate(items):
        if task not in TASKS:
            raise TacoValidationError(
                f"tasks[{position}]: must be one of {', '.join(TASKS)}; found {task!r}"
            )
    return items


def check_string_list(key: str, value: object) -> list[str]:
    """A list of strings (a bare string is refused: it is not a list)."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise TacoValidationError(f"{key}: expected a list of strings, found {value!r}")
    for position, item in enumerate(value):
        if not isinstance(item, str):
            raise TacoValidationError(
                f"{key}[{position}]: expected a string, found {type(item).__name__} {item!r}"
            )
    return list(value)
