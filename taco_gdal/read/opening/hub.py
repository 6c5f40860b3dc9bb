"""Locations users publish TACO datasets under: ``hf://`` URLs and ``tacofoundation:`` ids.

``hf://datasets/<namespace>/<name>[@<revision>]/<file>`` is read through ``/vsicurl/``
from ``<endpoint>/datasets/<namespace>/<name>/resolve/<revision>/<file>`` (endpoint:
``TACO_GDAL_HF_ENDPOINT``, ``HF_ENDPOINT`` or ``https://huggingface.co``).  A branch
revision (``main`` by default) moves under the stored offsets, so it warns; a 40-hex
commit pins the bytes.  ``tacofoundation:<name>`` catalogue ids (tacoreader < 1.0)
are not locations: loading one raises an error that says how to open the dataset.
"""

from __future__ import annotations

import os
import re
import warnings
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote

from taco_gdal.errors import TacoValidationError, TacoWarning

__all__ = [
    "DEFAULT_ENDPOINT",
    "ENDPOINT_VARIABLES",
    "HfLocation",
    "hf_endpoint",
    "legacy_hint",
    "parse_hf",
    "resolve_location",
]

HF_PREFIX: Final = "hf://datasets/"
TACOFOUNDATION_PREFIX: Final = "tacofoundation:"
DEFAULT_ENDPOINT: Final = "https://huggingface.co"
ENDPOINT_VARIABLES: Final = ("TACO_GDAL_HF_ENDPOINT", "HF_ENDPOINT")
DEFAULT_REVISION: Final = "main"
_COMMIT: Final = re.compile(r"^[0-9a-f]{40}$")
_PART: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
LEGACY_SUFFIXES: Final = (".taco", ".tortilla")


@dataclass(frozen=True, slots=True)
class HfLocation:
    """A parsed ``hf://datasets/...`` URL.

    Example:
        >>> parse_hf("hf://datasets/org/data@v1.0/a/b.zip").file
        'a/b.zip'
    """

    namespace: str
    name: str
    revision: str
    file: str
    pinned: bool

    def url(self, endpoint: str = DEFAULT_ENDPOINT) -> str:
        """The HTTPS address of the file's bytes at this revision.

        Example:
            >>> parse_hf("hf://datasets/org/data/x.zip").url()
            'https://huggingface.co/datasets/org/data/resolve/main/x.zip'
        """
        revision = quote(self.revision, safe="")
        file = quote(self.file, safe="/")
        base = endpoint.rstrip("/")
        return f"{base}/datasets/{self.namespace}/{self.name}/resolve/{revision}/{file}"


def parse_hf(url: str) -> HfLocation:
    """Split ``hf://datasets/<namespace>/<name>[@<revision>]/<file>``.

    Raises:
        TacoValidationError: not that shape (the message shows it).

    Example:
        >>> parse_hf("hf://datasets/tacofoundation/cloudsen12@" + "a" * 40 + "/l1c.tacozip").pinned
        True
    """
    shape = "hf://datasets/<namespace>/<name>[@<revision>]/<file>"
    if not url.startswith(HF_PREFIX):
        raise TacoValidationError(f"expected a URL of the form {shape}, found {url!r}")
    parts = url[len(HF_PREFIX) :].split("/", 2)
    if len(parts) < 3 or not all(parts):
        raise TacoValidationError(
            f"{url}: expected {shape} (namespace, dataset name and a file), found "
            f"{len([p for p in parts if p])} of the 3 parts"
        )
    namespace, name, file = parts
    revision = DEFAULT_REVISION
    if "@" in name:
        name, revision = name.split("@", 1)
    for label, value in (("namespace", namespace), ("dataset name", name)):
        if not _PART.match(value):
            raise TacoValidationError(
                f"{url}: expected a {label} of letters, digits, '.', '_' or '-', found {value!r}"
            )
    if not revision:
        raise TacoValidationError(f"{url}: expected a revision after '@', found none")
    return HfLocation(namespace, name, revision, file, bool(_COMMIT.match(revision)))


def hf_endpoint() -> str:
    """The Hugging Face host (see the module docstring).

    Example:
        >>> hf_endpoint().startswith("http")
        True
    """
    for variable in ENDPOINT_VARIABLES:
        value = os.environ.get(variable)
        if value:
            return value.rstrip("/")
    return DEFAULT_ENDPOINT


def legacy_hint(given: str) -> str | None:
    """How to open a location that looks like an older TACO generation, or None.

    Example:
        >>> "hf://datasets/tacofoundation/" in legacy_hint("tacofoundation:cloudsen12")
        True
    """
    if given.startswith(TACOFOUNDATION_PREFIX):
        name = given[len(TACOFOUNDATION_PREFIX) :] or "<name>"
        return (
            f"{given!r} is a tacoreader < 1.0 catalogue id, not a location: tacoreader 0.x "
            "looked it up in the TACO Foundation list on Hugging Face and loaded the files "
            "it named. taco_gdal does not fetch that list; open the files themselves, e.g. "
            f"taco_gdal.load('hf://datasets/tacofoundation/{name}@<commit>/<file>') (a list "
            "of paths for a dataset in several parts), or a local copy"
        )
    if given.lower().endswith(LEGACY_SUFFIXES):
        return (
            f"{given!r} has a TACO v1 name ({'/'.join(LEGACY_SUFFIXES)}) but does not start with "
            "the v1 magic b'WX' (.taco) or b'#y' (.tortilla) followed by a zeroed header: "
            "taco_gdal reads v1 files written by tacotoolbox 0.5 / pytortilla through the "
            "taco_v1 plugin (installed with taco_gdal); a file in several parts "
            "('x.0000.part.taco') is loaded with a list of its parts"
        )
    return None


def resolve_location(given: str) -> str:
    """``given``, with an ``hf://`` URL turned into its GDAL path; catalogue ids refused.

    Raises:
        TacoValidationError: a ``tacofoundation:`` id (the message says how to
            open it), or a malformed ``hf://`` URL.

    Example:
        >>> resolve_location("/data/x.tacozip")
        '/data/x.tacozip'
    """
    if given.startswith(TACOFOUNDATION_PREFIX):
        hint = legacy_hint(given)
        raise TacoValidationError(hint or given)
    if not given.startswith(HF_PREFIX):
        return given
    location = parse_hf(given)
    if not location.pinned:
        warnings.warn(
            f"{given}: revision {location.revision!r} is a branch, which moves; the file "
            f"(and the offsets stored in it) may change under you. Pin a commit: "
            f"hf://datasets/{location.namespace}/{location.name}@<40-hex commit>/{location.file}",
            TacoWarning,
            stacklevel=3,
        )
    return "/vsicurl/" + location.url(hf_endpoint())
